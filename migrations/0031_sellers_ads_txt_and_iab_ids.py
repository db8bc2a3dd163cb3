"""sellers.json, ads.txt and IAB ids: a publisher may be listed confidential in ``/sellers.json``; a site records
whether its ads.txt carries adnet's line and when it was read; a campaign carries the IAB Ad Product Taxonomy id
of its category, which this maps for every campaign stored before (from the taxonomy data file adnet ships,
``adnet.campaigns.taxonomy``), so every category in the database has its id.
"""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise import fields

from adnet.campaigns import taxonomy

UPDATE = "UPDATE campaign SET category_iab_id = {0} WHERE category = {1}"


async def map_categories(apps, editor) -> None:
    """Give each stored campaign the IAB id of its category."""
    client = editor.client
    marks = ("$1", "$2") if client.capabilities.dialect == "postgres" else ("?", "?")
    for category, entry in taxonomy.ad_products().entries.items():
        await client.execute_query(UPDATE.format(*marks), [entry.iab_id, category.value])


class Migration(migrations.Migration):
    dependencies = [('models', '0030_wallet_audiences')]

    initial = False

    operations = [
        ops.AddField(
            model_name='Campaign',
            name='category_iab_id',
            field=fields.CharField(description='the IAB Ad Product Taxonomy id of its category (adnet.campaigns.taxonomy), written with it', db_default='', max_length=16),
        ),
        ops.AddField(
            model_name='Publisher',
            name='confidential',
            field=fields.BooleanField(default=False, description='sellers.json lists it without name or domain', db_default=False),
        ),
        ops.AddField(
            model_name='Site',
            name='ads_txt_checked_at',
            field=fields.DatetimeField(null=True, description='when adnet last read its ads.txt', auto_now=False, auto_now_add=False),
        ),
        ops.AddField(
            model_name='Site',
            name='ads_txt_listed',
            field=fields.BooleanField(null=True, description="whether its ads.txt carried adnet's line when last read (None: never read)"),
        ),
        ops.RunPython(map_categories, ops.RunPython.noop),
    ]
