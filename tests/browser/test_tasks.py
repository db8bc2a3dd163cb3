"""Attached tasks in Chromium on a publisher's page of another origin than adnet, with the injected test wallet: a
VISIT_URL task through the visit link with the time away as its dwell, a SIGN_MESSAGE task signed by the wallet, a
QUIZ answered wrong then right, and an ONCHAIN_EVENT task whose configured transfer the embed has the wallet send,
then confirms by itself (too early first, then confirmed); each refusal is shown as adnet said it, and each claim
the SDK's "Redeem on-chain" sends to the vault of the embedded chain pays the wallet exactly once."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from eth_abi import encode
from eth_utils import keccak
from hexbytes import HexBytes
from playwright.sync_api import expect
from quart import current_app

from adnet.demo import BURN_ADDRESS
from adnet.tasks.models import Task
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page
from tests.chain.helpers import mine
from tests.conftest import rebuild_index

G = 10**18
TASKS_SLOT = ('<div id="slot-tasks" data-adnet-slot data-kind="BANNER" data-size="300x250" data-placement="sidebar" '
              "data-tasks></div>")


def gs_balance(server: LiveServer, wallet: str) -> int:
    return server.call(lambda: server.chain.token_balance("G$", wallet))


def is_claimed(server: LiveServer, claim_ref: str) -> bool:
    return server.call(lambda: server.chain.vault.functions.isClaimed(HexBytes(claim_ref)).call())


def task_row(visitor: Visitor, server: LiveServer, site: PublisherSite, kind: str) -> Any:
    page = publisher_page(visitor, server, site, TASKS_SLOT)
    slot = page.locator("#slot-tasks")
    slot.scroll_into_view_if_needed()
    row = slot.locator(f"li[data-kind={kind}]")
    row.wait_for()
    return row


def redeem_and_check(visitor: Visitor, server: LiveServer, row: Any, balance_before: int) -> None:
    """The claim handed to the page's callback pays the wallet exactly its amount, once."""
    (claim,) = visitor.events("claim")
    transaction = claim["transaction"]
    assert claim["awarded"] == {"points": 10, "gs": 0.5}
    assert transaction["amount"] == str(G // 2)
    assert transaction["recipient"].lower() == visitor.wallet.address
    assert not is_claimed(server, transaction["claimRef"])

    row.get_by_role("button", name="Redeem on-chain").click()
    row.get_by_text("Redeemed.", exact=False).wait_for()

    assert len(visitor.wallet.sent) == 1
    assert visitor.events("redeem")[0]["txHash"] == visitor.wallet.sent[0]
    assert is_claimed(server, transaction["claimRef"])
    assert gs_balance(server, visitor.wallet.address) - balance_before == G // 2
    assert visitor.console.script_errors() == [] and visitor.console.page_errors == []


def test_a_visit_url_task_completes_and_its_claim_redeems(server: LiveServer, visitor: Visitor,
                                                          publisher_site: PublisherSite,
                                                          live_campaigns: Callable[..., list[str]]) -> None:
    live_campaigns(0)
    visitor.page.clock.install()
    row = task_row(visitor, server, publisher_site, "VISIT_URL")
    balance_before = gs_balance(server, visitor.wallet.address)

    # Chromium does not hand a redirect's next request to Playwright's routing, so the visit link's request goes to
    # adnet from here, which shows the landing page in place of following adnet's redirect to the internet.
    redirects: list[tuple[int, str]] = []

    def visit_link(route: Any) -> None:
        answer = route.fetch(max_redirects=0)
        redirects.append((answer.status, answer.headers.get("location", "")))
        route.fulfill(status=200, content_type="text/html", body="<!doctype html><title>Sponsor</title><p>Hi</p>")

    visitor.context.route("**/api/tasks/*/visit?*", visit_link)
    with visitor.context.expect_page() as opened:
        row.get_by_role("link", name="Visit").click()
    landing = opened.value
    landing.wait_for_load_state()
    assert redirects == [(302, "https://example.com/demo/visit")]
    assert landing.evaluate("window.opener") is None
    landing.close()
    # Six seconds on the sponsor's page, for the page and for the server (which started the visit on redirect).
    visitor.page.clock.run_for(6000)
    server.clock.advance(seconds=6)
    row.get_by_role("button", name="I'm back").click()
    row.get_by_text("Done", exact=True).wait_for()

    (completion,) = visitor.events("complete")
    assert completion["taskId"] == server.demo["taskIds"]["VISIT_URL"][0]
    redeem_and_check(visitor, server, row, balance_before)


def test_a_sign_message_task_completes_with_the_wallet_and_its_claim_redeems(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    live_campaigns(1)
    row = task_row(visitor, server, publisher_site, "SIGN_MESSAGE")
    balance_before = gs_balance(server, visitor.wallet.address)

    visitor.page.evaluate("window.__wallet = window.ethereum; delete window.ethereum")
    row.get_by_role("button", name="Sign with wallet").click()
    expect(row.get_by_text("This task needs a wallet", exact=False)).to_be_visible()
    visitor.page.evaluate("window.ethereum = window.__wallet")

    row.get_by_role("button", name="Sign with wallet").click()
    row.get_by_text("Done", exact=True).wait_for()

    assert "personal_sign" in visitor.wallet.requests
    (completion,) = visitor.events("complete")
    assert completion["taskId"] == server.demo["taskIds"]["SIGN_MESSAGE"][0]
    redeem_and_check(visitor, server, row, balance_before)


def test_a_wrong_quiz_answer_is_explained_and_a_right_one_pays(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    live_campaigns(0)
    row = task_row(visitor, server, publisher_site, "QUIZ")
    balance_before = gs_balance(server, visitor.wallet.address)

    row.get_by_role("button", name="SOV").click()
    row.get_by_text("That answer is not right.").wait_for()  # adnet's refusal, read across origins
    assert not row.get_by_text("The network did not answer", exact=False).is_visible()
    row.get_by_role("button", name="G$").click()
    row.get_by_text("Done", exact=True).wait_for()

    (completion,) = visitor.events("complete")
    assert completion["taskId"] == server.demo["taskIds"]["QUIZ"][0]
    redeem_and_check(visitor, server, row, balance_before)


def test_an_onchain_task_sends_its_transaction_from_the_wallet_and_confirms_by_itself(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]]) -> None:
    """The demo's on-chain task is configured with a transfer of 0.01 G$: the embed puts exactly that before the
    wallet, submits its hash, and, told it needs another confirmation, asks again by itself until it counts."""
    live_campaigns(2)
    row = task_row(visitor, server, publisher_site, "ONCHAIN_EVENT")
    token = server.chain.deployment.gs_token
    burned_before = gs_balance(server, BURN_ADDRESS)

    row.get_by_role("button", name="Send with wallet").click()
    # Mined, not yet confirmed: the embed says what adnet said and keeps checking on its own.
    row.get_by_text("needs 1 more confirmation(s); checking again…", exact=False).wait_for()
    (tx_hash,) = visitor.wallet.sent
    sent = server.call(lambda: server.chain.w3.eth.get_transaction(tx_hash))
    assert (sent["to"].lower(), sent["from"].lower()) == (token, visitor.wallet.address)
    assert sent["input"].to_0x_hex() == "0x" + (keccak(text="transfer(address,uint256)")[:4] + encode(
        ["address", "uint256"], [BURN_ADDRESS, G // 100])).hex()
    assert gs_balance(server, BURN_ADDRESS) - burned_before == G // 100
    balance_before = gs_balance(server, visitor.wallet.address)
    server.call(lambda: mine(server.chain))
    row.get_by_text("Done", exact=True).wait_for()  # no click: the embed retried by itself

    (completion,) = visitor.events("complete")
    assert completion["taskId"] == server.demo["taskIds"]["ONCHAIN_EVENT"][0]
    assert row.get_by_label("Transaction hash").count() == 0  # nothing to paste
    visitor.wallet.sent.remove(tx_hash)  # the transfer is the proof; redeeming sends the only other transaction
    redeem_and_check(visitor, server, row, balance_before)


async def _configure(task_id: str, call: dict[str, str] | None, per_wallet: int) -> None:
    task = await Task.get(id=task_id)
    await Task.filter(id=task_id).update(config={**task.config, "call": call}, max_per_wallet=per_wallet)
    await rebuild_index(current_app)


@pytest.fixture
def onchain_without_call(server: LiveServer) -> Iterator[str]:
    """The demo's on-chain task configured without a transaction to prepare (as the API allows), and completable
    once more by the visitor's wallet (which the test above may have used on it); then as before."""
    (task_id,) = server.demo["taskIds"]["ONCHAIN_EVENT"]
    task = server.call(lambda: Task.get(id=task_id))
    server.call(lambda: _configure(task_id, None, task.max_per_wallet + 1))
    yield task_id
    server.call(lambda: _configure(task_id, task.config["call"], task.max_per_wallet))


def test_an_onchain_task_without_a_prepared_transaction_takes_a_pasted_hash(
        server: LiveServer, visitor: Visitor, publisher_site: PublisherSite,
        live_campaigns: Callable[..., list[str]], onchain_without_call: str) -> None:
    live_campaigns(2)
    row = task_row(visitor, server, publisher_site, "ONCHAIN_EVENT")
    assert row.get_by_role("button", name="Send with wallet").count() == 0
    token = server.chain.deployment.gs_token
    data = "0x" + (keccak(text="transfer(address,uint256)")[:4] + encode(["address", "uint256"], [
        "0x" + "11" * 20, G // 100])).hex()
    tx_hash = visitor.page.evaluate("(tx) => window.ethereum.request({method: 'eth_sendTransaction', params: [tx]})",
                                    {"from": visitor.wallet.address, "to": token, "data": data})
    row.get_by_label("Transaction hash").fill(tx_hash)
    row.get_by_role("button", name="Check").click()
    row.get_by_text("confirmation", exact=False).wait_for()  # mined, not yet confirmed: adnet says to wait
    server.call(lambda: mine(server.chain))
    row.get_by_role("button", name="Check").click()
    row.get_by_text("Done", exact=True).wait_for()
    (completion,) = visitor.events("complete")
    assert completion["taskId"] == onchain_without_call
