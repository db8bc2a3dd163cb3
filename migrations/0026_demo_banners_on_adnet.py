"""The demo's banners as paths on adnet: ``adnet demo`` once stored them with the origin it was loaded on
(``http://127.0.0.1:8000/static/demo/banner-1-300x250.svg``), so they broke wherever adnet was served on another
address. Now it stores the path (``/static/demo/banner-1-300x250.svg``), which answers name under the public URL
(``adnet.campaigns.banners.banner_address``); this rewrites the creatives of the demo advertiser (development
account 1) that still hold such an address. Nothing else changes: no advertiser's own banner is a path.
"""

import re

from tortoise import migrations
from tortoise.migrations import operations as ops

# The demo advertiser: development account 1 of the well-known development mnemonic (``adnet.core.wallets``).
DEMO_ADVERTISER = "0x70997970c51812dc3a010c7d01b50e0d17dc79c8"
DEMO_BANNER = re.compile(r"^https?://[^/]+(/static/demo/banner-\d+-\d+x\d+\.svg)$")
SELECT = ("SELECT creative.id AS id, creative.banner_url AS banner_url FROM creative "
          "JOIN campaign ON campaign.id = creative.campaign_id "
          "JOIN advertiser ON advertiser.id = campaign.advertiser_id "
          "WHERE advertiser.wallet = {0} AND creative.banner_url LIKE '%/static/demo/banner-%'")
UPDATE = "UPDATE creative SET banner_url = {0} WHERE id = {1}"


async def demo_banners_as_paths(apps, editor) -> None:
    """Keep only the path of each demo banner the demo advertiser's creatives name with an origin."""
    client = editor.client
    marks = ("$1", "$2") if client.capabilities.dialect == "postgres" else ("?", "?")
    for row in await client.execute_query_dict(SELECT.format(marks[0]), [DEMO_ADVERTISER]):
        found = DEMO_BANNER.match(row["banner_url"])
        if found is not None:
            await client.execute_query(UPDATE.format(*marks), [found.group(1), row["id"]])


class Migration(migrations.Migration):
    dependencies = [('models', '0025_announced_changes')]

    initial = False

    operations = [
        ops.RunPython(demo_banners_as_paths, ops.RunPython.noop),
    ]
