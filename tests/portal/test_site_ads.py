"""The site page's panel of the ads that ran on the site: campaigns and creatives by name with their figures, a
range of days chosen with htmx (the panel swapped) or without JavaScript (the page), a bad range refused in the
panel."""

from __future__ import annotations

from datetime import timedelta

from adnet.accounts.models import Publisher
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import CPM, event_body, post, served_and_seen
from tests.conftest import rebuild_index
from tests.factories import make_advertiser, make_campaign, make_creative, make_publisher, make_site


async def site_with_an_ad(publisher, clock):
    owner = await Publisher.get_or_none(wallet=publisher.wallet) or await make_publisher(publisher.wallet)
    site = await make_site(owner, domain="ads-panel.example")
    advertiser = await make_advertiser()
    advertiser.name = "Chain Bank"
    await advertiser.save()
    campaign = await make_campaign(advertiser, name="Savings <now>", cpm=CPM)
    await make_creative(campaign, description="Earn 5%")
    await rebuild_index(publisher.client.app)
    ad = await served_and_seen(publisher.client, clock, site)
    assert (await post(publisher.client, event_body(ad, site)))[0].status_code == 201
    return site, campaign


async def test_the_site_page_lists_the_ads_that_ran(publisher, clock):
    site, campaign = await site_with_an_ad(publisher, clock)
    html = await (await publisher.get(f"/portal/sites/{site.id}/traffic")).get_data(as_text=True)
    assert 'id="site-ads"' in html and f'id="ran-{campaign.id}"' in html
    assert "Savings &lt;now&gt;" in html and "Chain Bank" in html and "Earn 5%" in html
    assert "<td>1 (1)</td>" in html and "0.0014</td>" in html  # 2 G$ CPM: 0.002 an impression, 70 % earned


async def test_a_range_with_htmx_and_without_javascript(publisher, clock):
    site, campaign = await site_with_an_ad(publisher, clock)
    yesterday = (clock.today() - timedelta(days=1)).isoformat()
    fragment = await publisher.get(f"/portal/sites/{site.id}/ads?from={yesterday}&to={yesterday}", htmx=True)
    html = await fragment.get_data(as_text=True)
    assert html.lstrip().startswith('<section id="site-ads"') and 'id="no-ads"' in html
    assert f'value="{yesterday}"' in html
    today = clock.today().isoformat()
    page = await publisher.get(f"/portal/sites/{site.id}/ads?from={today}&to={today}")
    html = await page.get_data(as_text=True)
    assert page.status_code == 200 and html.startswith("<!doctype html>") and f'id="ran-{campaign.id}"' in html
    refused = await publisher.get(f"/portal/sites/{site.id}/ads?from={today}&to={yesterday}", htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and 'id="ads-error"' in html and 'aria-invalid="true"' in html


async def test_another_wallets_site_is_refused(publisher, other_publisher):
    owner = await make_publisher(other_publisher.wallet)
    site = await make_site(owner)
    assert (await publisher.get(f"/portal/sites/{site.id}/ads")).status_code == 403
