"""A viewer's rewards in Chromium: the embed's "My rewards" on a publisher's page of another origin than adnet
signs in with the wallet, lists the wallet's rewards with its points and what they are, and redeems every claim
in one vault transaction; adnet's own /rewards page redeems one; and an attached task completed before a reload,
whose claim the page lost, is redeemed from its row."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable, Iterator

import pytest
from hexbytes import HexBytes
from playwright.sync_api import Browser, expect
from quart import current_app

from adnet.core.wallets import dev_accounts
from adnet.reporting.rewards import POINTS_EXPLAINED
from adnet.tasks.models import Task, TaskKind
from tests.browser import conftest as live
from tests.browser.conftest import (
    EVENTS_SCRIPT,
    PROVIDER_SCRIPT,
    LiveServer,
    PublisherSite,
    Visitor,
    publisher_page,
    watch_console,
)
from tests.browser.test_tasks import TASKS_SLOT
from tests.conftest import rebuild_index
from tests.factories import make_task

G = 10**18
POLL = {"question": "Which chain?", "options": [{"id": "eth", "label": "Ethereum"}, {"id": "celo", "label": "Celo"}]}
REWARDS_SLOT = '<div id="my-rewards" data-adnet-rewards></div>'


@pytest.fixture
def viewer(browser: Browser, server: LiveServer, request: pytest.FixtureRequest) -> Iterator[Visitor]:
    """A fresh profile whose wallet is development account ``request.param`` (one no other browser test uses, so
    its rewards and completions are this test's alone), presenting as the Chrome it is."""
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  user_agent=f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                                             f"Chrome/{browser.version} Safari/537.36")
    wallet = live.TestWallet(server, dev_accounts()[request.param])
    context.expose_function("__adnetTestWallet", wallet.handle)
    context.add_init_script(PROVIDER_SCRIPT)
    context.add_init_script(EVENTS_SCRIPT)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield Visitor(context=context, page=page, wallet=wallet, console=watch_console(page))
    context.close()


def answered_polls(server: LiveServer, wallet: str, count: int) -> list[dict]:
    """``count`` polls answered by ``wallet`` through the API (10 points and 1 G$ each); their answers. The polls
    are switched off afterwards, so that the other tests' pages are served the demo's units as before."""
    answers, units = [], []
    for index in range(count):
        unit = server.call(lambda index=index: make_task(kind=TaskKind.POLL, config=POLL, pool=5 * G,
                                                         reward_gs=G, title=f"Poll {index} of {wallet[:8]}"))
        body = json.dumps({"taskId": unit.id, "siteId": server.demo["pageSiteId"], "fingerprint": f"fp-{unit.id}",
                           "wallet": wallet, "proof": {"optionId": "celo"}}).encode()
        request = urllib.request.Request(f"{server.url}/api/interactions", data=body,  # noqa: S310 - the test server
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310
            answers.append(json.loads(response.read()))
        units.append(unit.id)
    server.call(lambda: _switch_off(units))
    return answers


async def _switch_off(unit_ids: list[str]) -> None:
    await Task.filter(id__in=unit_ids).update(active=False)
    await rebuild_index(current_app)


def is_claimed(server: LiveServer, claim_ref: str) -> bool:
    return server.call(lambda: server.chain.vault.functions.isClaimed(HexBytes(claim_ref)).call())


def gs_balance(server: LiveServer, wallet: str) -> int:
    return server.call(lambda: server.chain.token_balance("G$", wallet))


@pytest.mark.parametrize("viewer", [9], indirect=True)
def test_my_rewards_on_a_publishers_page_redeems_all_in_one_transaction(
        server: LiveServer, viewer: Visitor, publisher_site: PublisherSite) -> None:
    answers = answered_polls(server, viewer.wallet.address, 3)
    before = gs_balance(server, viewer.wallet.address)
    page = publisher_page(viewer, server, publisher_site, REWARDS_SLOT)
    assert not page.url.startswith(server.url)  # another origin than adnet
    panel = page.locator("#my-rewards")
    panel.get_by_role("button", name="My rewards").click()
    expect(panel.get_by_role("heading", name="My rewards")).to_be_visible()
    assert viewer.wallet.requests.count("personal_sign") == 1  # the rewards sign-in, nothing sent yet
    expect(panel.get_by_text("30 points", exact=True)).to_be_visible()
    expect(panel.get_by_text(POINTS_EXPLAINED)).to_be_visible()
    expect(panel.locator("li[data-reward]")).to_have_count(3)
    expect(panel.get_by_text("Ready to redeem.")).to_have_count(3)

    panel.get_by_role("button", name="Redeem all (3)").click()
    expect(panel.get_by_text("confirming on-chain", exact=False)).to_have_count(3)
    assert len(viewer.wallet.sent) == 1  # one transaction for the three claims
    for answer in answers:
        assert is_claimed(server, answer["transaction"]["claimRef"])
    assert gs_balance(server, viewer.wallet.address) == before + 3 * G
    (redeemed,) = [event for event in viewer.events("redeem")]
    assert redeemed["txHash"] == viewer.wallet.sent[0] and redeemed["count"] == 3
    assert viewer.console.script_errors() == [] and viewer.console.page_errors == []


@pytest.mark.parametrize("viewer", [3], indirect=True)
def test_adnets_rewards_page_redeems_one_claim(server: LiveServer, viewer: Visitor) -> None:
    (answer,) = answered_polls(server, viewer.wallet.address, 1)
    page = viewer.page
    page.goto(f"{server.url}/rewards")
    expect(page.get_by_role("heading", name="My rewards", level=1)).to_be_visible()
    panel = page.locator("#rewards")
    panel.get_by_role("button", name="My rewards").click()
    expect(panel.get_by_role("heading", name="My rewards", level=2)).to_be_visible()  # under the page's h1
    row = panel.locator("li[data-reward]")
    expect(row).to_have_count(1)
    expect(panel.get_by_text("10 points", exact=True)).to_be_visible()
    assert panel.get_by_role("button", name="Redeem all", exact=False).count() == 0  # one claim: its own button
    row.get_by_role("button", name="Redeem").click()
    expect(row.get_by_text("confirming on-chain", exact=False)).to_be_visible()
    assert is_claimed(server, answer["transaction"]["claimRef"])
    assert viewer.console.script_errors() == [] and viewer.console.page_errors == []


@pytest.mark.parametrize("viewer", [4], indirect=True)
def test_a_task_done_before_a_reload_is_redeemed_from_its_row(
        server: LiveServer, viewer: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    visitor = viewer
    live_campaigns(0)
    page = publisher_page(visitor, server, publisher_site, TASKS_SLOT)
    slot = page.locator("#slot-tasks")
    slot.scroll_into_view_if_needed()
    row = slot.locator("li[data-kind=QUIZ]")
    assert "not a token" in row.locator(".reward").first.get_attribute("title")  # points explained where shown
    row.get_by_role("button", name="G$").click()
    row.get_by_text("Done", exact=True).wait_for()
    (claim,) = visitor.events("claim")
    claim_ref = claim["transaction"]["claimRef"]

    page.reload()  # the answer and its claim are gone from the page
    slot = page.locator("#slot-tasks")
    slot.scroll_into_view_if_needed()
    row = slot.locator("li[data-kind=QUIZ]")
    row.get_by_text("Done", exact=True).wait_for()
    assert row.get_by_role("button", name="Redeem on-chain").count() == 0
    row.get_by_role("button", name="Redeem", exact=True).click()
    row.get_by_text("Redeemed.", exact=False).wait_for()
    assert "personal_sign" in visitor.wallet.requests  # the rewards sign-in proved the wallet
    assert is_claimed(server, claim_ref)
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []
