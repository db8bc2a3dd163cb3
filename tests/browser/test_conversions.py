"""A conversion end to end in Chromium: a viewer clicks an ad on a publisher's page (another origin than adnet),
the advertiser's landing page (a third origin) receives the click id in its address, and the conversion the
advertiser's server reports with it is attributed to the click and paid; or the landing page's snippet proves the
viewer's wallet for the click, and that wallet's on-chain event pays it. A viewer signed in for rewards on the
publisher's page has its wallet proven for the impressions the embed records there (view-through)."""

from __future__ import annotations

import time
from collections.abc import Callable
from decimal import Decimal
from urllib.parse import parse_qs, urlencode, urlsplit

from eth_utils import keccak
from playwright.sync_api import expect

from adnet.campaigns.models import ConversionGoal, GoalKind
from adnet.conversions.commands import ConversionReport
from adnet.conversions.models import Conversion, ViewBinding
from adnet.conversions.recording import Terms, record_conversion
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.delivery.models import EventType
from adnet.money import ledger
from tests.browser.conftest import (
    ADVERTISER_ORIGIN,
    CAP_WINDOW_SECONDS,
    LiveServer,
    PublisherSite,
    Visitor,
    publisher_page,
    watch_console,
)
from tests.browser.test_banners import (
    ARTICLE_SLOT,
    bring_into_view,
    let_time_pass,
    rendered_ad,
    seen_impression,
    wait_for_events,
)
from tests.browser.test_rewards import REWARDS_SLOT

CPA = 3


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
        page.locator("#ad a.ad").click()
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
        dev_accounts()[1].address.lower(), report, Terms.of(settings), server.clock.now()))
    conversion = recorded.conversion
    assert (conversion.attributed, conversion.paid, conversion.reason, conversion.site_id) == (
        True, True, None, site_id)
    assert parse_qs(urlsplit(landing.url).query)["adnet_click"] == [click_id]
    earned = server.call(lambda: ledger.balance(ledger.site(site_id))) - earned_before
    assert earned == CPA * settings.publisher_share_bps // 10_000
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)


APPROVAL_TOPIC = "0x" + keccak(text="Approval(address,address,uint256)").hex()


def test_the_landing_snippet_proves_the_wallet_whose_onchain_event_then_pays_the_click(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    """The landing page (a third origin) loads ``static/conversions.js``, which has the injected wallet sign the
    click's binding and posts it; the wallet then approves a spender on the G$ token, the goal's event (Approval,
    its owner in topic1); once the reader has read the confirmed block, the click's site earns its share."""
    (campaign_id,) = live_campaigns(0)
    goal_id = new_id("goal")
    chain = server.chain
    server.call(lambda: ConversionGoal.create(
        id=goal_id, campaign_id=campaign_id, name="Approve", event=f"approve-{goal_id[-8:].lower()}",
        kind=GoalKind.ONCHAIN, contract=chain.gs_address, topic0=APPROVAL_TOPIC, wallet_field="topic1",
        cpa=Decimal(CPA), created_at=server.clock.now(), updated_at=server.clock.now()))
    server.call(lambda: server.services.jobs.run("conversion-goals"))  # the reader is past the blocks before
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
    visitor.page.clock.install()
    page, fingerprint, _ = seen_impression(visitor, server, publisher_site)
    with visitor.context.expect_page() as opened:
        page.locator("#ad a.ad").click()
    target = opened.value
    target.wait_for_url(f"{ADVERTISER_ORIGIN}/**")
    click_id = target.evaluate("new URLSearchParams(location.search).get('adnet_click')")
    (click,) = wait_for_events(server, fingerprint, EventType.CLICK, 1)
    assert click["billable"], click["refusal_reason"]
    # The shop's own landing page, on a third origin (a web server of its own, on another port), keeps the click
    # id it is opened with and loads the snippet from adnet.
    shop = PublisherSite()
    try:
        landing_url = shop.put(f"/welcome?{urlencode({'adnet_click': click_id})}",
                               '<!doctype html><title>Shop</title><p>Welcome</p>'
                               f'<script src="{server.url}/static/conversions.js"></script>')
        landing = visitor.context.new_page()
        landing_console = watch_console(landing)
        landing.goto(landing_url)
        landing.wait_for_function("window.adnetConversions && window.adnetConversions.version")
        assert len({urlsplit(url).netloc for url in (landing.url, page.url, server.url)}) == 3
        bound = landing.evaluate("adnetConversions.bind()")
    finally:
        shop.close()
    assert bound == {"status": "bound", "wallet": visitor.wallet.address, "campaignId": campaign_id}
    assert "personal_sign" in visitor.wallet.requests
    site_id = server.demo["pageSiteId"]
    earned_before = server.call(lambda: ledger.balance(ledger.site(site_id)))
    approve = chain.build_approve_tx(visitor.wallet.address, "G$", 1)
    landing.evaluate("(tx) => window.ethereum.request({method: 'eth_sendTransaction', params: [tx]})", approve)
    assert len(visitor.wallet.sent) == 1
    server.call(lambda: chain.w3.provider.make_request("evm_mine", []))  # type: ignore[arg-type]
    server.call(lambda: server.services.jobs.run("conversion-goals"))

    conversions = server.call(lambda: Conversion.filter(goal_id=goal_id).values("paid", "reason", "site_id", "wallet"))
    assert conversions == [{"paid": True, "reason": None, "site_id": site_id, "wallet": visitor.wallet.address}]
    earned = server.call(lambda: ledger.balance(ledger.site(site_id))) - earned_before
    assert earned == CPA * server.services.settings.publisher_share_bps // 10_000
    assert landing_console.script_errors() == [] and landing_console.page_errors == []
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)


def test_a_rewards_session_on_the_publishers_page_proves_its_wallet_for_the_impressions_the_embed_records(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    """The viewer signs in to "My rewards" on a publisher's page of another origin; the page's banner then becomes
    viewable, and the embed, once the impression is recorded, posts its tracking token with the rewards session:
    the wallet is proven for that impression, as a goal's view window needs (the wallet signed nothing more)."""
    (campaign_id,) = live_campaigns(0)
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
    visitor.page.clock.install()
    spacer = '<div style="height: 2400px"></div>'  # the banner stays out of view while the viewer signs in
    page = publisher_page(visitor, server, publisher_site, REWARDS_SLOT + spacer + ARTICLE_SLOT)
    assert not page.url.startswith(server.url)
    panel = page.locator("#my-rewards")
    panel.get_by_role("button", name="My rewards").click()
    expect(panel.get_by_role("heading", name="My rewards")).to_be_visible()
    assert visitor.wallet.requests.count("personal_sign") == 1

    rendered_ad(visitor)
    fingerprint = page.evaluate("adnet.fingerprint()")
    bring_into_view(visitor)
    let_time_pass(visitor, server, 1100)
    (impression,) = wait_for_events(server, fingerprint, EventType.IMPRESSION, 1)
    assert impression["billable"], impression["refusal_reason"]
    deadline = time.monotonic() + 10
    while not (bindings := server.call(lambda: ViewBinding.filter(campaign_id=campaign_id,
                                                                  wallet=visitor.wallet.address).values(
            "site_id", "creative_id"))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bindings == [{"site_id": server.demo["pageSiteId"], "creative_id": impression["creative_id"]}]
    assert visitor.wallet.requests.count("personal_sign") == 1  # no signature beyond the rewards sign-in
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
    server.clock.advance(seconds=CAP_WINDOW_SECONDS)
