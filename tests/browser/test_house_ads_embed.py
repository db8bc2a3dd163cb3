"""A house ad in Chromium, on a publisher's page of another origin than adnet: a banner slot that no paid campaign
fills shows the site's own banner, unlabelled as sponsored; its viewable impression and its click are counted at
/api/track/house (one each), and nothing is recorded as a paid event."""

from __future__ import annotations

import json
import time
from typing import Any

from quart import current_app

from adnet.accounts.models import Site
from adnet.core.ids import new_id
from adnet.delivery.models import HouseAd, HouseAdDaily, TrackingEvent
from tests.browser.conftest import ADVERTISER_ORIGIN, LiveServer, PublisherSite, Visitor, publisher_page, retire_site
from tests.browser.test_banners import bring_into_view, let_time_pass, rendered_ad
from tests.conftest import rebuild_index
from tests.factories import make_site

# A size no demo campaign has: only the house ad fits it, except in the slot that turns house ads off.
SLOT = ('<div id="ad" data-adnet-slot data-kind="BANNER" data-size="234x60" data-placement="article"></div>'
        '<div id="plain" data-adnet-slot data-kind="BANNER" data-size="234x60" data-house="off"></div>')


def counts(server: LiveServer, site_id: str, want: int) -> dict[str, int]:
    """The house ad's counts by event type, once they add up to ``want`` (or after 10 seconds)."""
    deadline = time.monotonic() + 10
    while True:
        rows = server.call(lambda: HouseAdDaily.filter(site_id=site_id).values_list("type", "events"))
        found = {str(kind): events for kind, events in rows}
        if sum(found.values()) >= want or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def test_a_house_ad_fills_an_unsold_slot_and_its_events_are_counted(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    async def site_with_a_house_ad() -> tuple[Site, HouseAd]:
        site = await make_site(domain="localhost", verified=False, now=server.clock.now())
        house_ad = await HouseAd.create(
            id=new_id("house"), site=site, banner_url=f"{server.url}/static/favicon.svg",
            target_url=f"{ADVERTISER_ORIGIN}/house", description="Our newsletter", width=234, height=60,
            created_at=server.clock.now())
        await rebuild_index(current_app)
        return site, house_ad

    site, house_ad = server.call(site_with_a_house_ad)
    try:
        sent: list[dict[str, Any]] = []
        served: list[str] = []
        visitor.page.on("request", lambda request: sent.append(json.loads(request.post_data or "{}"))
                        if request.method == "POST" and "/api/track" in request.url else None)
        visitor.page.on("request", lambda request: served.append(request.url) if "/api/serve" in request.url else None)
        visitor.page.clock.install()
        page = publisher_page(visitor, server, publisher_site, SLOT, site_id=site.id)
        assert rendered_ad(visitor) == house_ad.id
        assert visitor.events("serve")[0]["kind"] == "HOUSE"
        assert page.locator("#ad").get_by_text("Sponsored").count() == 0
        assert page.locator("#ad a.ad").get_attribute("rel") == "noopener"
        assert page.locator("#ad img").get_attribute("alt") == "Our newsletter"
        # data-house="off": the slot asks with house=0 and stays empty.
        page.wait_for_selector('#plain[data-adnet-empty="none"]', state="attached")
        assert page.locator("#plain").evaluate("slot => slot.shadowRoot.querySelector('img')") is None
        assert sorted("house=0" in url for url in served) == [False, True]

        bring_into_view(visitor)
        let_time_pass(visitor, server, 1100)
        assert counts(server, site.id, 1) == {"IMPRESSION": 1}
        with visitor.context.expect_page() as opened:
            page.locator("#ad a.ad").click()
        opened.value.close()
        assert counts(server, site.id, 2) == {"IMPRESSION": 1, "CLICK": 1}

        assert sent == [{"type": "IMPRESSION", "siteId": site.id, "houseAdId": house_ad.id},
                        {"type": "CLICK", "siteId": site.id, "houseAdId": house_ad.id}]
        assert server.call(lambda: TrackingEvent.filter(site_id=site.id).count()) == 0
        assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
    finally:
        server.call(lambda: retire_site(site.id))
