"""On-chain goals end to end on the embedded chain and on anvil: a click's landing page proves the visitor's wallet
(its signature of the click's message); the wallet then sends a token transfer, the goal's event; once confirmed the
reader records the conversion once, pays the CPA (the publisher's share to the click's site) and the audit is clean;
the same event from a wallet proven for no click is recorded once as ``wallet_unbound``, without its wallet and
unpaid, and reading the blocks again changes nothing. A campaign that ended is still read for as long as its goal's
window: the conversion of a click made before the end is recorded (attributed; unpaid, its budget returned). A
wallet proven (by its rewards session) for an impression but no click converts as a view within the goal's view
window; a click wins over a view."""

from __future__ import annotations

from decimal import Decimal

from eth_account.messages import encode_defunct

from adnet.campaigns.models import ConversionGoal, GoalKind
from adnet.chain.client import ChainClient
from adnet.chain.models import ChainCursor
from adnet.chain.watcher import advance_cursor
from adnet.conversions.binding import binding_message
from adnet.conversions.models import Conversion
from adnet.conversions.onchain import CURSOR_NAME, GoalReader
from adnet.conversions.recording import Terms
from adnet.core.ids import new_id
from adnet.demo import TRANSFER_TOPIC
from adnet.money import ledger
from adnet.money.audit import audit
from adnet.money.models import LedgerTransaction
from tests.api.test_conversion_views import prove_view, seen
from tests.api.test_conversions import CPA, account, click_id_of, clicked
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.auth_helpers import bearer, rewards_sign_in
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import advance_chain_time, mine, user
from tests.chain.test_task_onchain import transfer_from
from tests.chain.test_watcher import with_confirmations
from tests.factories import EPOCH

pytestmark = ON_BOTH_CHAINS


def reader(chain: ChainClient, clock, settings) -> GoalReader:
    """A reader of ``chain`` waiting for two confirmations, that records as the app's does, at the test clock's
    time."""
    return GoalReader(with_confirmations(chain, 2), clock=clock, terms=Terms.of(settings))


async def read_from_now(chain: ChainClient) -> int:
    """Start the reader after the chain's latest block (returned): the development chain's own transfers (its
    funding of the test accounts) are no test's conversions."""
    latest = await chain.block_number()
    await advance_cursor(CURSOR_NAME, latest)
    return latest


async def chain_time_after(chain: ChainClient, chain_kind: str, moment) -> None:
    """Move anvil's time past ``moment`` unless it is already (the embedded chain's blocks follow the clock)."""
    if chain_kind != "anvil":
        return
    behind = moment.timestamp() - await chain.block_timestamp(await chain.block_number())
    if behind >= 0:
        await advance_chain_time(chain, int(behind) + 1)


async def onchain_goal(chain: ChainClient, campaign, **fields) -> ConversionGoal:
    """The campaign's goal: a G$ transfer from the converting wallet (topic1 of Transfer), priced ``CPA``."""
    return await ConversionGoal.create(**{
        "id": new_id("goal"), "campaign": campaign, "name": "Transfer", "event": "transfer", "kind": GoalKind.ONCHAIN,
        "contract": chain.gs_address, "topic0": TRANSFER_TOPIC, "wallet_field": "topic1", "cpa": Decimal(CPA),
        "created_at": EPOCH, "updated_at": EPOCH, **fields})


async def bind(client, click_id: str, index: int) -> None:
    """Development account ``index`` proves itself for the click, as the landing page's snippet has it do."""
    visitor = user(index)
    signature = visitor.sign_message(encode_defunct(text=binding_message(click_id))).signature.to_0x_hex()
    bound = await client.post("/api/conversions/bind", json={"clickId": click_id, "wallet": visitor.address,
                                                             "signature": signature})
    assert bound.status_code == 201, await bound.get_json()


async def test_a_proven_wallets_event_is_one_paid_conversion_and_an_unbound_ones_none(client, app_chain, clock,
                                                                                      settings, chain_kind):
    chain = app_chain
    advertiser, _, _ = await account(client)
    site, campaign, _, answer = await clicked(client, clock, advertiser)
    goal = await onchain_goal(chain, campaign)
    visitor = user(1)
    await bind(client, click_id_of(answer), 1)
    before = await ledger.balances_of([ledger.campaign(campaign.id), ledger.site(site.id), ledger.platform()])
    start = await read_from_now(chain)

    clock.advance(minutes=1)
    await chain_time_after(chain, chain_kind, clock.now())
    proven_tx = await transfer_from(chain, 1)
    unbound_tx = await transfer_from(chain, 2)
    goal_reader = reader(chain, clock, settings)
    assert (await goal_reader.run_once()).recorded == 0  # not confirmed yet
    assert await Conversion.all().count() == 0
    await mine(chain, 2)
    assert (await goal_reader.run_once()).recorded == 2

    conversion = await Conversion.get(order_id__startswith=proven_tx)
    assert (conversion.goal_id, conversion.wallet, conversion.site_id, conversion.attributed, conversion.paid,
            conversion.reason, int(conversion.cost)) == (goal.id, visitor.address.lower(), site.id, True, True, None,
                                                         CPA)
    assert conversion.order_id.startswith(proven_tx + ":")
    unbound = await Conversion.get(order_id__startswith=unbound_tx)
    assert (unbound.goal_id, unbound.wallet, unbound.click_event_id, unbound.site_id, unbound.attributed, unbound.paid,
            unbound.reason, int(unbound.cost)) == (goal.id, None, None, None, False, False, "wallet_unbound", 0)
    share = CPA * settings.publisher_share_bps // 10_000
    after = await ledger.balances_of(before)
    assert after[ledger.campaign(campaign.id)] == before[ledger.campaign(campaign.id)] - CPA
    assert after[ledger.site(site.id)] == before[ledger.site(site.id)] + share
    assert after[ledger.platform()] == before[ledger.platform()] + CPA - share
    assert (await audit(None)).problems == []

    # Read again from the cursor, and from the start as a second reader would: still one conversion, one booking.
    assert (await goal_reader.run_once()).recorded == 0
    await ChainCursor.filter(name=CURSOR_NAME).update(block_number=start)
    assert (await reader(chain, clock, settings).run_once()).recorded == 0
    assert await Conversion.all().count() == 2
    assert await LedgerTransaction.filter(kind="conversion_billing").count() == 1


async def test_events_after_a_filtered_click_or_below_the_minimum_pay_nothing(client, app_chain, clock, settings,
                                                                             chain_kind):
    chain = app_chain
    advertiser, _, _ = await account(client)
    _, campaign, _, answer = await clicked(client, clock, advertiser, impression=False)  # no viewable impression
    await onchain_goal(chain, campaign)
    await onchain_goal(chain, campaign, event="big-transfer", amount_field="data0", min_amount=Decimal(10**30))
    await bind(client, click_id_of(answer), 3)
    await read_from_now(chain)
    clock.advance(minutes=1)
    await chain_time_after(chain, chain_kind, clock.now())
    await transfer_from(chain, 3)
    await mine(chain, 2)
    assert (await reader(chain, clock, settings).run_once()).recorded == 1
    conversion = await Conversion.get()
    assert ((await conversion.goal).event, conversion.attributed, conversion.paid, conversion.reason) == (
        "transfer", False, False, "click_filtered")
    assert await LedgerTransaction.filter(kind="conversion_billing").count() == 0
    assert (await audit(None)).problems == []


async def test_an_ended_campaign_is_read_for_its_goals_window_and_records_without_paying(client, app_chain, clock,
                                                                                         settings, chain_kind):
    chain = app_chain
    advertiser, session, _ = await account(client)
    site, campaign, _, answer = await clicked(client, clock, advertiser)
    goal = await onchain_goal(chain, campaign, click_window_days=2)
    await bind(client, click_id_of(answer), 1)
    await read_from_now(chain)
    clock.advance(minutes=1)
    ended = await client.post(f"/api/advertisers/campaigns/{campaign.id}/end", json={}, headers=bearer(session))
    assert ended.status_code == 200, await ended.get_json()
    earned = await ledger.balance(ledger.site(site.id))

    clock.advance(days=1)
    await chain_time_after(chain, chain_kind, clock.now())
    inside = await transfer_from(chain, 1)
    await mine(chain, 2)
    assert (await reader(chain, clock, settings).run_once()).recorded == 1
    conversion = await Conversion.get()
    assert (conversion.goal_id, conversion.order_id.split(":")[0], conversion.site_id, conversion.attributed,
            conversion.paid, conversion.reason) == (goal.id, inside, site.id, True, False, "budget_exhausted")
    assert await ledger.balance(ledger.site(site.id)) == earned

    clock.advance(days=1, minutes=1)  # the goal's window after the end has passed: its events are no longer read
    await chain_time_after(chain, chain_kind, clock.now())
    await transfer_from(chain, 1)
    await transfer_from(chain, 2)
    await mine(chain, 2)
    assert (await reader(chain, clock, settings).run_once()).recorded == 0
    assert await Conversion.all().count() == 1
    assert (await audit(None)).problems == []


async def test_a_wallet_proven_for_a_view_converts_as_a_view_and_a_click_wins_over_a_view(client, app_chain, clock,
                                                                                          settings, chain_kind):
    chain = app_chain
    advertiser, _, _ = await account(client)
    site, campaign, _, answer = await clicked(client, clock, advertiser)
    await onchain_goal(chain, campaign, view_window_hours=24, wallet_cap=5)
    for index, address in ((1, "10.66.1.1"), (2, "10.66.2.1")):  # both viewers proven for an impression
        ad = await seen(client, clock, site, address)
        proven, _ = await prove_view(client, site, await rewards_sign_in(client, user(index)), ad["trackingToken"],
                                     address)
        assert proven.status_code == 201
    await bind(client, click_id_of(answer), 2)  # the second also for the click: the click wins
    await read_from_now(chain)
    before = await ledger.balance(ledger.site(site.id))

    clock.advance(minutes=1)
    await chain_time_after(chain, chain_kind, clock.now())
    viewed_tx, clicked_tx, unbound_tx = [await transfer_from(chain, index) for index in (1, 2, 3)]
    await mine(chain, 2)
    assert (await reader(chain, clock, settings).run_once()).recorded == 3
    outcomes = {tx: await Conversion.get(order_id__startswith=tx) for tx in (viewed_tx, clicked_tx, unbound_tx)}
    view, click, unbound = outcomes[viewed_tx], outcomes[clicked_tx], outcomes[unbound_tx]
    assert (view.attributed_via, view.attributed, view.paid, view.site_id, view.wallet) == (
        "view", True, True, site.id, user(1).address.lower())
    assert (click.attributed_via, click.attributed, click.paid) == ("click", True, True)
    assert (unbound.attributed_via, unbound.reason, unbound.wallet) == (None, "wallet_unbound", None)
    share = CPA * settings.publisher_share_bps // 10_000
    assert await ledger.balance(ledger.site(site.id)) == before + 2 * share

    # A day later the view no longer attributes; the click (7 days) still does.
    clock.advance(days=1, minutes=1)
    await chain_time_after(chain, chain_kind, clock.now())
    late_view, late_click = [await transfer_from(chain, index) for index in (1, 2)]
    await mine(chain, 2)
    assert (await reader(chain, clock, settings).run_once()).recorded == 2
    late = await Conversion.get(order_id__startswith=late_view)
    assert (late.attributed_via, late.attributed, late.reason) == ("view", False, "outside_window")
    assert (await Conversion.get(order_id__startswith=late_click)).paid
    assert (await audit(None)).problems == []
