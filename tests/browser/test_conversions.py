"""A conversion end to end in Chromium: a viewer clicks an ad on a publisher's page (another origin than adnet),
the advertiser's landing page (a third origin) receives the click id in its address, and the conversion the
advertiser's server reports with it is attributed to the click and paid."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from urllib.parse import parse_qs, urlsplit

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.commands import ConversionReport
from adnet.conversions.recording import record_conversion
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import EventType
from adnet.money import ledger
from tests.browser.conftest import ADVERTISER_ORIGIN, LiveServer, PublisherSite, Visitor
from tests.browser.test_banners import seen_impression, wait_for_events

CPA = 3
CAP_WINDOW_SECONDS = 301


def test_the_landing_page_on_a_third_origin_receives_the_click_id_that_a_paid_conversion_reports(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    (campaign_id,) = live_campaigns(0)
    goal_id = new_id("goal")
    server.call(lambda: ConversionGoal.create(id=goal_id, campaign_id=campaign_id, name="Sign-up",
                                              event=f"signup-{goal_id[-8:].lower()}", cpa=Decimal(CPA),
                                              created_at=server.clock.now(), updated_at=server.clock.now()))
    # The billing caps count per client network, and every visitor here is 127.0.0.1: start and leave fresh windows.
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
    visitor.page.clock.install()
    page, fingerprint, _ = seen_impression(visitor, server, publisher_site)
    assert urlsplit(page.url).netloc.startswith("localhost:") and not server.url.startswith("http://localhost")

    with visitor.context.expect_page() as opened:
        page.locator("#ad a").click()
    landing = opened.value
    landing.wait_for_url(f"{ADVERTISER_ORIGIN}/**")
    click_id = landing.evaluate("new URLSearchParams(location.search).get('adnet_click')")
    assert landing.evaluate("location.origin") == ADVERTISER_ORIGIN and click_id
    (click,) = wait_for_events(server, fingerprint, EventType.CLICK, 1)
    assert click["billable"], click["refusal_reason"]

    site_id = server.demo["pageSiteId"]
    earned_before = server.call(lambda: ledger.balance(ledger.site(site_id)))
    settings = server.services.settings
    report = ConversionReport.model_validate({"clickId": click_id, "goalId": goal_id, "orderId": f"o-{fingerprint}"})
    recorded = server.call(lambda: record_conversion(
        dev_accounts()[1].address.lower(), report, secrets=(settings.tracking_secret,),
        share_bps=settings.publisher_share_bps, single_writer=True, now=server.clock.now()))
    conversion = recorded.conversion
    assert (conversion.attributed, conversion.paid, conversion.reason, conversion.site_id) == (
        True, True, None, site_id)
    assert parse_qs(urlsplit(landing.url).query)["adnet_click"] == [click_id]
    earned = server.call(lambda: ledger.balance(ledger.site(site_id))) - earned_before
    assert earned == CPA * settings.publisher_share_bps // 10_000
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
