"""Every portal URL is a page: each GET route of the portal's blueprints, opened as a browser opens a link (no
``HX-Request``), answers a whole HTML document with its language and a title, and the site page's sections answer
the tabs and the section alone to htmx. The route list is read from the app, so a route added later is walked too.

Not walked, since they are files rather than pages: CSV exports, the embed script, and the review queue's banner
previews (``tests/portal/test_review_queue.py``)."""

from __future__ import annotations

import re

import pytest
from eth_account import Account

from adnet.campaigns.models import CampaignStatus, CreativeStatus
from adnet.core.ids import new_id
from adnet.delivery.models import AdUnit
from adnet.money import ledger
from adnet.money.models import Withdrawal
from adnet.tasks.models import TaskKind
from tests.conftest import make_settings
from tests.factories import (
    EPOCH,
    G,
    fund,
    make_advertiser,
    make_campaign,
    make_creative,
    make_publisher,
    make_site,
    make_task,
)
from tests.portal.conftest import HTMX, portal_sign_in

OWNER = Account.from_key("0x" + "24" * 32)
FILES = (".csv", ".js", "/banner")
DOCUMENT = re.compile(r'^<!doctype html>\s*<html lang="[a-z]{2}[^"]*">.*<title>[^<]*\S[^<]*</title>', re.S | re.I)


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings where the walking wallet is also an operator, so the operators' pages answer it."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OWNER.address)


async def world(client, chain):
    """One wallet with a site (a unit, a withdrawal), an advertiser account (a campaign with a creative and a poll,
    a withdrawal): what every route's arguments name."""
    owner = OWNER.address.lower()
    signed_in = await portal_sign_in(client, OWNER)
    site = await make_site(await make_publisher(owner))
    unit = await AdUnit.create(id=new_id("au"), site=site, name="Sidebar", kinds=["BANNER"], size="300x250",
                               created_at=EPOCH, updated_at=EPOCH)
    advertiser = await make_advertiser(owner)
    campaign = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
    await make_creative(campaign, status=CreativeStatus.REVIEW)
    poll = await make_task(kind=TaskKind.POLL, campaign=campaign,
                           config={"question": "Best?", "options": [{"id": "a", "label": "A"},
                                                                    {"id": "b", "label": "B"}]})
    await fund(ledger.site(site.id), 3 * G)
    await fund(ledger.advertiser(advertiser.id), 3 * G)
    assert (await signed_in.post(f"/portal/sites/{site.id}/withdraw", {"amount": "1", "token": "G$"})).status_code \
        == 303
    assert (await signed_in.post("/portal/advertise/withdraw", {"amount": "1"})).status_code == 303
    site_withdrawal = await Withdrawal.get(site_id=site.id)
    advertiser_withdrawal = await Withdrawal.get(advertiser_id=advertiser.id)
    return signed_in, {"site_id": site.id, "unit_id": unit.id, "campaign_id": campaign.id,
                       "withdrawal_id": site_withdrawal.id}, {
        "portal_advertisers.advertise_withdrawal": {"withdrawal_id": advertiser_withdrawal.id},
        "portal_advertisers.advertise_unit_results": {"unit_id": poll.id}}


def walked_urls(app, ids: dict[str, str], by_endpoint: dict[str, dict[str, str]]) -> list[str]:
    """The URL of every GET route of the portal's blueprints, each value of an ``any(...)`` part in turn."""
    urls = []
    for rule in app.url_map.iter_rules():
        if not rule.endpoint.startswith("portal_") or "GET" not in (rule.methods or ()):
            continue
        if any(part in rule.rule for part in FILES):
            continue
        values = {**ids, **by_endpoint.get(rule.endpoint, {}), **(rule.defaults or {})}
        choices = [{}]
        for name, converter in rule._converters.items():
            if hasattr(converter, "items"):
                choices = [{**choice, name: item} for choice in choices for item in sorted(converter.items)]
        for choice in choices:
            built = rule.build({**values, **choice}, append_unknown=False)
            assert built is not None, rule.rule
            urls.append(built[1])
    return urls


async def test_every_portal_get_route_answers_a_whole_document(app, client, chain):
    signed_in, ids, by_endpoint = await world(client, chain)
    urls = walked_urls(app, ids, by_endpoint)
    assert "/portal/operator/rate" in urls and f"/portal/sites/{ids['site_id']}/settings" in urls
    assert len(urls) > 30
    for url in urls:
        answer = await signed_in.get(url)
        html = await answer.get_data(as_text=True)
        assert answer.status_code == 200, (url, answer.status_code, html[:300])
        assert answer.mimetype == "text/html", url
        assert DOCUMENT.match(html.lstrip()), (url, html[:300])


@pytest.mark.parametrize(("section", "title", "holds"), [
    ("", "Overview", 'id="site-verification"'), ("money", "Money", 'id="withdraw-form"'),
    ("embed", "Embed and units", 'id="unit-builder"'), ("traffic", "Traffic and reports", 'id="site-ads"'),
    ("controls", "Controls", 'id="site-controls"'), ("settings", "Settings", 'id="danger-zone"'),
])
async def test_each_section_of_the_site_page_is_a_page_and_a_fragment(app, client, chain, section, title, holds):
    signed_in, ids, _ = await world(client, chain)
    url = f"/portal/sites/{ids['site_id']}" + (f"/{section}" if section else "")
    page = await (await signed_in.get(url)).get_data(as_text=True)
    assert DOCUMENT.match(page.lstrip()) and f"<title>{title} · " in page and holds in page
    assert page.count("<title>") == 1  # the fragment's own title is for htmx only
    current = re.findall(r'<a href="([^"]+)" id="tab-[a-z]+"[^>]*aria-current="page">([^<]+)</a>', page)
    assert current == [(url, title)]
    fragment = await (await signed_in.client.get(url, headers=HTMX)).get_data(as_text=True)
    assert "<html" not in fragment and fragment.lstrip().startswith("<title>") and holds in fragment
    assert '<div id="site-sections">' in fragment and 'aria-current="page">' + title in fragment
    others = [other for other in ('id="site-verification"', 'id="withdraw-form"', 'id="unit-builder"',
                                  'id="site-ads"', 'id="site-controls"', 'id="danger-zone"') if other != holds]
    assert not any(other in fragment for other in others)


@pytest.mark.parametrize(("section", "title", "holds"), [
    ("", "Overview", 'id="campaign-actions"'), ("creatives", "Creatives and tasks", 'id="creatives-heading"'),
    ("targeting", "Targeting", 'id="settings-heading"'), ("budget", "Budget", 'id="allocate-heading"'),
])
async def test_each_section_of_a_campaign_page_is_a_page_and_a_fragment(app, client, chain, section, title, holds):
    signed_in, ids, _ = await world(client, chain)
    url = f"/portal/advertise/campaigns/{ids['campaign_id']}" + (f"/{section}" if section else "")
    page = await (await signed_in.get(url)).get_data(as_text=True)
    assert DOCUMENT.match(page.lstrip()) and f"<title>{title} · " in page and holds in page
    assert page.count("<title>") == 1  # the fragment's own title is for htmx only
    current = re.findall(r'<a href="([^"]+)" id="campaign-tab-[a-z]+"[^>]*aria-current="page">([^<]+)</a>', page)
    assert current == [(url, title)]
    fragment = await (await signed_in.client.get(url, headers=HTMX)).get_data(as_text=True)
    assert "<html" not in fragment and fragment.lstrip().startswith("<title>") and holds in fragment
    others = [other for other in ('id="campaign-actions"', 'id="creatives-heading"', 'id="settings-heading"',
                                  'id="allocate-heading"') if other != holds]
    assert not any(other in fragment for other in others)
    report = await (await signed_in.get(f"/portal/advertise/campaigns/{ids['campaign_id']}/report")).get_data(
        as_text=True)
    assert re.search(r'id="campaign-tab-report"\s+aria-current="page">Reports</a>', report)
