"""A site's money in the portal: balance, top-up through the wallet and the status partial, withdrawal with its
redeem transaction and status, exchange with its preview; exact amounts, moved only by the domain functions."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from adnet.chain.transact import send_transaction
from adnet.core.amounts import Token, to_decimal_string
from adnet.money import ledger
from adnet.money.exchanges import convert
from adnet.money.holders import account_ref
from adnet.money.models import Claim, Deposit, Exchange, Withdrawal, WithdrawalStatus
from tests.factories import G, fund, make_publisher, make_site


@pytest.fixture
async def site(publisher):
    return await make_site(await make_publisher(publisher.wallet), domain="money.example")


def attribute(html: str, name: str) -> str:
    found = re.search(name + r"='([^']*)'", html)
    assert found, name
    return found.group(1)


async def test_the_site_page_shows_the_balance_from_the_ledger(publisher, site):
    await fund(ledger.site(site.id), 12 * G + G // 4)
    await fund(ledger.site(site.id, "SOV"), 3 * G)
    html = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert 'id="balance-claimable">12.25 G$' in html and 'id="balance-sov">3 SOV' in html
    fragment = await publisher.get(f"/portal/sites/{site.id}/balance", htmx=True)
    body = await fragment.get_data(as_text=True)
    assert body.lstrip().startswith('<section id="balance"') and "12.25 G$" in body and "<h1>" not in body


async def test_a_top_up_is_prepared_sent_by_the_wallet_and_credited_once(publisher, site, chain):
    prepared = await publisher.post(f"/portal/sites/{site.id}/topup/prepare", {"amount": "7.5"}, htmx=True)
    html = await prepared.get_data(as_text=True)
    approve, deposit = json.loads(attribute(html, "data-transactions"))
    assert deposit["to"].lower() == chain.vault_address and approve["from"] == publisher.account.address
    assert f'data-status-url="/portal/sites/{site.id}/topup"' in html and "7.5 G$" in html

    await send_transaction(chain.w3, publisher.account, approve)
    receipt = await send_transaction(chain.w3, publisher.account, deposit)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    status = await publisher.post(f"/portal/sites/{site.id}/topup", {"txHash": tx_hash}, htmx=True)
    body = await status.get_data(as_text=True)
    assert 'data-state="credited"' in body and "7.5 G$ added" in body and "hx-trigger" not in body
    assert status.headers["HX-Trigger"] == "balance-changed"
    again = await publisher.post(f"/portal/sites/{site.id}/topup", {"txHash": tx_hash}, htmx=True)
    assert 'data-state="credited"' in await again.get_data(as_text=True)
    assert await ledger.balance(ledger.site(site.id)) == 7 * G + G // 2
    assert await Deposit.filter(tx_hash=tx_hash).count() == 1
    page = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert "<caption>Top-ups</caption>" in page and tx_hash in page
    # a deposit sent without the portal is credited from its hash, through the same status route
    assert f'hx-post="/portal/sites/{site.id}/topup" hx-target="#topup-progress"' in page and 'id="topup-tx"' in page


async def test_a_deposit_not_mined_yet_is_polled_as_sent(publisher, site):
    unknown = "0x" + "ab" * 32
    status = await publisher.post(f"/portal/sites/{site.id}/topup", {"txHash": unknown}, htmx=True)
    body = await status.get_data(as_text=True)
    assert 'data-state="sent"' in body and 'hx-trigger="load delay:1500ms"' in body and unknown in body
    assert "HX-Trigger" not in status.headers


async def test_a_top_up_refusal_is_shown_beside_the_form(publisher, site, chain):
    bad_amount = await publisher.post(f"/portal/sites/{site.id}/topup/prepare", {"amount": "-3"}, htmx=True)
    assert bad_amount.headers["HX-Retarget"] == "#topup-form"
    assert "Amount: enter an amount such as 2.5" in await bad_amount.get_data(as_text=True)
    other_sites_ref = await make_site(await site.publisher)
    await send_transaction(chain.w3, publisher.account, chain.build_approve_tx(publisher.wallet, "G$", G))
    receipt = await send_transaction(chain.w3, publisher.account, chain.build_deposit_tx(
        publisher.wallet, "G$", G, account_ref(other_sites_ref.id)))
    wrong = await publisher.post(f"/portal/sites/{site.id}/topup",
                                 {"txHash": receipt["transactionHash"].to_0x_hex()})
    assert wrong.status_code == 400
    assert "The deposit credits another account" in await wrong.get_data(as_text=True)
    beside = await publisher.post(f"/portal/sites/{site.id}/topup",
                                  {"txHash": receipt["transactionHash"].to_0x_hex()}, htmx=True)
    html = await beside.get_data(as_text=True)
    assert beside.status_code == 400 and beside.headers["HX-Retarget"] == "#topup-credit"
    assert '<details class="muted" id="topup-credit" open>' in html and 'aria-describedby="topup-tx-error"' in html
    assert '<p id="topup-tx-error" class="error" role="alert">The deposit credits another account' in html
    assert await ledger.balance(ledger.site(site.id)) == 0


async def test_a_deposit_the_watcher_credited_first_shows_credited_and_another_sites_is_refused(publisher, site,
                                                                                              chain, app):
    """The hash of the site's deposit that the watcher credited before the form was posted shows as credited (once);
    posted on the page of another of the wallet's sites, it is refused beside the field, not shown as credited."""
    await send_transaction(chain.w3, publisher.account, chain.build_approve_tx(publisher.wallet, "G$", 2 * G))
    receipt = await send_transaction(chain.w3, publisher.account, chain.build_deposit_tx(
        publisher.wallet, "G$", 2 * G, account_ref(site.id)))
    tx_hash = receipt["transactionHash"].to_0x_hex()
    assert (await app.extensions["adnet"].jobs.run("chain-watcher")).deposits_credited == 1

    status = await publisher.post(f"/portal/sites/{site.id}/topup", {"txHash": tx_hash}, htmx=True)
    assert status.status_code == 200 and 'data-state="credited"' in await status.get_data(as_text=True)
    other = await make_site(await site.publisher, domain="other-money.example")
    refused = await publisher.post(f"/portal/sites/{other.id}/topup", {"txHash": tx_hash}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 409 and refused.headers["HX-Retarget"] == "#topup-credit"
    assert '<p id="topup-tx-error" class="error" role="alert">This transaction was credited before' in html
    assert 'data-state="credited"' not in html
    assert (await ledger.balance(ledger.site(site.id)), await ledger.balance(ledger.site(other.id))) == (2 * G, 0)


async def test_a_withdrawal_debits_at_once_and_follows_the_chain_to_redeemed(publisher, site, chain, app):
    await fund(ledger.site(site.id), 10 * G)
    response = await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "6.5", "token": "G$"}, htmx=True)
    html = await response.get_data(as_text=True)
    assert response.headers["HX-Trigger"] == "balance-changed"
    withdrawal = await Withdrawal.get(site_id=site.id).select_related("claim")
    assert int(withdrawal.amount) == 6 * G + G // 2 and f'id="withdrawal-{withdrawal.id}"' in html
    redeem = json.loads(attribute(html, "data-transaction"))
    assert redeem == chain.build_claim_tx(publisher.wallet, withdrawal.claim) and "data-autorun" in html
    assert await ledger.balance(ledger.site(site.id)) == 3 * G + G // 2
    page = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert "<caption>Withdrawals</caption>" in page and "No money has moved yet." not in page
    assert (f'hx-get="/portal/sites/{site.id}/withdrawals/{withdrawal.id}" hx-target="#withdraw-progress">Redeem</a>'
            in page)

    receipt = await send_transaction(chain.w3, publisher.account, redeem)
    tx_hash = receipt["transactionHash"].to_0x_hex()
    status_path = f"/portal/sites/{site.id}/withdrawals/{withdrawal.id}?tx={tx_hash}"
    mined = await (await publisher.get(status_path, htmx=True)).get_data(as_text=True)
    assert 'data-state="issued"' in mined and "mined; waiting for adnet" in mined and 'hx-trigger="every 2s"' in mined
    # The page never marks a withdrawal redeemed on the browser's word: only the watcher does, from the chain.
    assert (await Withdrawal.get(id=withdrawal.id)).status == WithdrawalStatus.ISSUED
    await app.extensions["adnet"].watcher.run_once()
    redeemed = await publisher.get(status_path, htmx=True)
    body = await redeemed.get_data(as_text=True)
    assert 'data-state="redeemed"' in body and "hx-trigger" not in body
    assert redeemed.headers["HX-Trigger"] == "balance-changed"


def idempotency_key_of(html: str) -> str:
    """The idempotency key the page's withdrawal form carries."""
    found = re.search(r'name="idempotency_key" value="([^"]+)"', html)
    assert found, "no idempotency key"
    return found.group(1)


async def test_a_withdrawal_form_submitted_twice_makes_one_withdrawal(publisher, site):
    """The key is drawn per rendering of the form: the same rendering posted twice (a double click, a retry after a
    lost answer), even at once, gives one withdrawal; a new rendering gives a new one."""
    await fund(ledger.site(site.id), 10 * G)
    path = f"/portal/sites/{site.id}/withdraw"
    first = idempotency_key_of(await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True))
    form = {"amount": "2", "token": "G$", "idempotency_key": first}

    answers = await asyncio.gather(*[publisher.post(path, form, htmx=True) for _ in range(4)])
    assert [answer.status_code for answer in answers] == [200] * 4
    [withdrawal] = await Withdrawal.filter(site_id=site.id)
    shown = [await answer.get_data(as_text=True) for answer in answers]
    assert all(f'id="withdrawal-{withdrawal.id}"' in html for html in shown)
    assert (await publisher.post(path, form)).status_code == 303  # without JavaScript, again the same
    assert await Withdrawal.filter(site_id=site.id).count() == 1
    assert await ledger.balance(ledger.site(site.id)) == 8 * G

    other_amount = await publisher.post(path, {**form, "amount": "3"}, htmx=True)
    assert other_amount.status_code == 409 and other_amount.headers["HX-Retarget"] == "#withdraw-form"
    assert idempotency_key_of(await other_amount.get_data(as_text=True)) != first  # shown again with a new key
    second = idempotency_key_of(await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True))
    assert second != first
    assert (await publisher.post(path, {**form, "idempotency_key": second})).status_code == 303
    assert await Withdrawal.filter(site_id=site.id).count() == 2
    assert await ledger.balance(ledger.site(site.id)) == 6 * G
    refused = await publisher.post(path, {**form, "idempotency_key": "with space"}, htmx=True)
    assert refused.status_code == 400 and await Withdrawal.filter(site_id=site.id).count() == 2


async def test_a_fake_redeem_hash_changes_nothing(publisher, site):
    await fund(ledger.site(site.id), 2 * G)
    await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "2"})
    withdrawal = await Withdrawal.get(site_id=site.id)
    fake = await publisher.get(f"/portal/sites/{site.id}/withdrawals/{withdrawal.id}?tx=0x{'cd' * 32}", htmx=True)
    assert "waiting for it to be mined" in await fake.get_data(as_text=True)
    assert (await Withdrawal.get(id=withdrawal.id)).status == WithdrawalStatus.ISSUED
    assert (await Claim.get(id=withdrawal.claim_id)).status.value == "issued"


async def test_withdrawing_without_javascript_redirects_with_a_message(publisher, site):
    await fund(ledger.site(site.id), 4 * G)
    response = await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "1.25"})
    assert response.status_code == 303 and response.headers["Location"] == f"/portal/sites/{site.id}/money"
    page = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert "Withdrawal of 1.25 G$ issued" in page and 'id="balance-pending">1.25 G$' in page
    assert 'id="balance-claimable">2.75 G$' in page


async def test_refused_withdrawals_are_shown_inline_and_change_nothing(publisher, site):
    await fund(ledger.site(site.id), 3 * G)
    cases = [("3.000000000000000001", "G$", "more than the site&#39;s claimable balance, which is 3 G$."),
             ("0.5", "G$", "A withdrawal is at least 1 G$."),
             ("abc", "G$", "Amount: enter an amount such as 2.5"), ("1", "ETH", "Token: one of G$, SOV"),
             ("1", "SOV", "more than the site&#39;s claimable balance, which is 0 SOV.")]
    for amount, token, message in cases:
        fragment = await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": amount, "token": token},
                                        htmx=True)
        assert fragment.status_code == 400 and fragment.headers["HX-Retarget"] == "#withdraw-form"
        html = await fragment.get_data(as_text=True)
        assert message in html and 'id="withdraw-error"' in html, (amount, token)
        page = await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": amount, "token": token})
        assert page.status_code == 400 and message in await page.get_data(as_text=True)
    assert await ledger.balance(ledger.site(site.id)) == 3 * G
    assert await Withdrawal.all().count() == 0 and await Claim.all().count() == 0


async def test_the_exchange_preview_and_the_exchange_give_the_same_exact_amounts(publisher, site, chain):
    await fund(ledger.site(site.id, "SOV"), 5 * G)
    rate = await chain.rate()
    expected = convert(2 * G + 1, Token.SOV, rate)
    preview = await publisher.post(f"/portal/sites/{site.id}/exchange/preview",
                                   {"from": "SOV", "amount": "2.000000000000000001"}, htmx=True)
    html = await preview.get_data(as_text=True)
    assert f"You will receive <strong>{to_decimal_string(expected)} G$</strong>" in html
    assert await Exchange.all().count() == 0  # a preview books nothing

    done = await publisher.post(f"/portal/sites/{site.id}/exchange",
                                {"from": "SOV", "amount": "2.000000000000000001"}, htmx=True)
    assert done.headers["HX-Trigger"] == "balance-changed"
    assert f"for {to_decimal_string(expected)} G$." in await done.get_data(as_text=True)
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 3 * G - 1
    assert await ledger.balance(ledger.site(site.id)) == expected
    back = await publisher.post(f"/portal/sites/{site.id}/exchange", {"from": "G$", "amount": "1"})
    assert back.status_code == 303
    assert await ledger.balance(ledger.site(site.id)) == expected - G
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 3 * G - 1 + convert(G, Token.GS, rate)


async def test_refused_exchanges_are_shown_inline_and_change_nothing(publisher, site):
    await fund(ledger.site(site.id, "SOV"), G)
    over = await publisher.post(f"/portal/sites/{site.id}/exchange", {"from": "SOV", "amount": "2"}, htmx=True)
    assert over.headers["HX-Retarget"] == "#exchange-form"
    assert "more than the site&#39;s claimable balance, which is 1 SOV." in await over.get_data(as_text=True)
    # the preview promises nothing the exchange would refuse
    too_much = await publisher.post(f"/portal/sites/{site.id}/exchange/preview", {"from": "SOV", "amount": "5"},
                                    htmx=True)
    said = await too_much.get_data(as_text=True)
    assert "which is 1 SOV." in said and "You will receive" not in said
    preview = await publisher.post(f"/portal/sites/{site.id}/exchange/preview", {"from": "BTC", "amount": "1"},
                                   htmx=True)
    assert "From: one of G$, SOV" in await preview.get_data(as_text=True)
    assert await ledger.balance(ledger.site(site.id, "SOV")) == G and await Exchange.all().count() == 0


async def test_money_forms_refuse_another_wallets_site(publisher, other_publisher, site):
    await fund(ledger.site(site.id), 5 * G)
    await fund(ledger.site(site.id, "SOV"), 5 * G)
    for path, form in (("withdraw", {"amount": "1"}), ("exchange", {"from": "SOV", "amount": "1"}),
                       ("exchange/preview", {"from": "SOV", "amount": "1"}), ("topup/prepare", {"amount": "1"}),
                       ("topup", {"txHash": "0x" + "ab" * 32})):
        for htmx in (False, True):
            response = await other_publisher.post(f"/portal/sites/{site.id}/{path}", form, htmx=htmx)
            assert response.status_code == 403, (path, htmx)
    assert await ledger.balance(ledger.site(site.id)) == 5 * G
    assert await ledger.balance(ledger.site(site.id, "SOV")) == 5 * G
    assert await Withdrawal.all().count() == 0 and await Exchange.all().count() == 0


async def test_a_withdrawal_of_another_site_is_not_found(publisher, other_publisher, site):
    await fund(ledger.site(site.id), 2 * G)
    await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "1"})
    withdrawal = await Withdrawal.get(site_id=site.id)
    own_site = await make_site(await make_publisher(other_publisher.wallet))
    stolen = await other_publisher.get(f"/portal/sites/{own_site.id}/withdrawals/{withdrawal.id}")
    assert stolen.status_code == 404
    assert (await other_publisher.get(f"/portal/sites/{site.id}/withdrawals/{withdrawal.id}")).status_code == 403


async def test_concurrent_withdrawals_from_the_portal_never_take_more_than_claimable(publisher, site):
    await fund(ledger.site(site.id), 3 * G)
    responses = await asyncio.gather(*(
        publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "3"}, htmx=True) for _ in range(15)))
    issued = [response for response in responses if "HX-Retarget" not in response.headers]
    assert len(issued) == 1
    assert await Withdrawal.all().count() == 1 and await ledger.balance(ledger.site(site.id)) == 0


async def test_a_top_up_above_the_wallets_g_balance_is_refused_before_any_transaction(publisher, site, chain):
    held = await chain.token_balance("G$", publisher.wallet)
    over = to_decimal_string(held + 1)
    refused = await publisher.post(f"/portal/sites/{site.id}/topup/prepare", {"amount": over}, htmx=True)
    html = await refused.get_data(as_text=True)
    assert refused.status_code == 400 and refused.headers["HX-Retarget"] == "#topup-form"
    assert f"Your wallet holds {to_decimal_string(held)} G$; the amount is more than that." in html
    assert 'id="topup-error"' in html and "data-transactions" not in html  # nothing for the wallet to send
    prepared = await publisher.post(f"/portal/sites/{site.id}/topup/prepare", {"amount": "2.5"}, htmx=True)
    approve, deposit = json.loads(attribute(await prepared.get_data(as_text=True), "data-transactions"))
    assert deposit == chain.build_deposit_tx(publisher.wallet, "G$", 2 * G + G // 2, account_ref(site.id))
    assert approve == chain.build_approve_tx(publisher.wallet, "G$", 2 * G + G // 2)  # exactly the amount


async def test_the_money_forms_show_what_they_can_move_and_reload_it(publisher, site, chain):
    await fund(ledger.site(site.id), 3 * G)
    await fund(ledger.site(site.id, "SOV"), G // 2)
    held = to_decimal_string(await chain.token_balance("G$", publisher.wallet))
    page = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert f"In your wallet: <strong>{held} G$</strong>" in page and f'data-max="{held}"' in page
    for form_name in ("withdraw", "exchange"):
        line = await (await publisher.get(f"/portal/sites/{site.id}/available/{form_name}", htmx=True)).get_data(
            as_text=True)
        assert f'id="{form_name}-available"' in line and 'hx-trigger="balance-changed from:body"' in line
        assert 'data-max="3"' in line and 'data-max="0.5"' in line and "which is 0.5 SOV." in line
        assert f'data-max-for="{form_name}-amount"' in line


async def test_the_recent_movements_reload_themselves(publisher, site):
    empty = await (await publisher.get(f"/portal/sites/{site.id}/activity", htmx=True)).get_data(as_text=True)
    assert "No money has moved yet." in empty and 'hx-trigger="balance-changed from:body"' in empty
    await fund(ledger.site(site.id), 3 * G)
    await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": "2"}, htmx=True)
    moved = await (await publisher.get(f"/portal/sites/{site.id}/activity", htmx=True)).get_data(as_text=True)
    assert "<caption>Withdrawals</caption>" in moved and "No money has moved yet." not in moved


async def test_the_site_page_lists_withdrawals_with_their_state_and_their_claim_again(publisher, site, chain, app):
    await fund(ledger.site(site.id), 10 * G)
    for amount in ("2", "3"):
        await publisher.post(f"/portal/sites/{site.id}/withdraw", {"amount": amount, "token": "G$"}, htmx=True)
    redeemed, issued = await Withdrawal.filter(site_id=site.id).order_by("amount").select_related("claim")
    await send_transaction(chain.w3, publisher.account, chain.build_claim_tx(publisher.wallet, redeemed.claim))
    await app.extensions["adnet"].jobs.run("chain-watcher")

    page = await (await publisher.get(f"/portal/sites/{site.id}/money")).get_data(as_text=True)
    assert "redeemed: paid to your wallet" in page and "issued: redeemable until" in page
    claim_link = f'href="/api/publishers/sites/{site.id}/withdrawals/{issued.id}" download='
    assert claim_link in page
    assert f"/withdrawals/{redeemed.id}\" download=" not in page  # a redeemed claim has nothing left to get
    # The link answers the claim with the portal's own session (its cookie), as the API gives it.
    again = await publisher.get(f"/api/publishers/sites/{site.id}/withdrawals/{issued.id}")
    assert again.status_code == 200
    body = await again.get_json()
    assert (body["status"], body["transaction"]["claimRef"]) == ("issued", issued.claim.claim_ref)
    assert body["transaction"]["signature"] == issued.claim.signature
