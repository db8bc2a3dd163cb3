"""A site's money in the portal: its balance, and the top-up, withdrawal and exchange flows.

The server prepares and checks; the wallet sends. A top-up is the approve and deposit transactions
(``adnet.money.deposits.prepare``) that ``static/portal.js`` has the wallet send, then the deposit's hash posted
back and polled until ``deposits.credit`` has credited it. A withdrawal is the claim ``adnet.money.withdrawals``
signs; the wallet sends the vault call that redeems it, and its status partial follows the watcher (issued →
redeemed, or released after the deadline). An exchange shows the vault's rate and a preview before
``adnet.money.exchanges`` books it. Each form shows what it can move at most (the wallet's G$, the site's claimable
balance) and refuses more before anything is sent. Every change answers ``HX-Trigger: balance-changed``, which makes
the balance, the recent movements and those figures reload themselves.
"""

from __future__ import annotations

from quart import Response, flash, render_template, request, url_for

from adnet.accounts.models import MemberRole
from adnet.accounts.sites import owned_site
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict, DomainError, Invalid
from adnet.money import activity, deposits, exchanges, withdrawals
from adnet.money.commands import DepositReport, ExchangeOrder, Funds, RedeemReport, Withdrawal
from adnet.money.holders import owned_site_holder, site_holder
from adnet.reporting.balances import site_balance
from adnet.services import Services
from portal.forms import command_of
from portal.pages import (
    account_form,
    account_page,
    form_error,
    form_idempotency_key,
    part_of_page,
    portal_blueprint,
    see_other,
    wants_fragment,
)
from portal.sites import funds_of, section_url, site_context
from portal.views import Refused, Sent, form_view
from web.context import injected
from web.sessions import current_wallet

blueprint = portal_blueprint("balance")

BALANCE_CHANGED = {"HX-Trigger": "balance-changed"}


def _refused(form_name: str) -> Refused:
    """The money form ``form_name`` refused as invalid: shown again with the reason beside the field."""
    async def refused(error: DomainError, sent: Sent, site_id: str) -> Response:
        site = await owned_site(sent.wallet, site_id)
        return await form_error(f"portal/_{form_name}_form.html", f"#{form_name}-form", error, "portal/site.html",
                                lambda: site_context(site, sent.run, "money"), values=sent.form.to_dict(),
                                failed_form=form_name, site=site, funds=await funds_of(site, sent.run))

    return refused


def _site_page(site_id: str) -> str:
    return section_url(site_id, "money")


@blueprint.get("/portal/sites/<site_id>/available/<any(topup, withdraw, exchange):form_name>")
@account_page
@injected
async def available(site_id: str, form_name: str, run: Services) -> tuple[str, int]:
    """What the money form ``form_name`` can move at most (its line beside the amount, reloaded when money moves)."""
    site = await owned_site(current_wallet(), site_id)
    return await part_of_page("portal/_available.html", "portal/site.html", lambda: site_context(site, run, "money"),
                              site=site, form_name=form_name, funds=await funds_of(site, run))


@blueprint.get("/portal/sites/<site_id>/activity")
@account_page
@injected
async def site_activity(site_id: str, run: Services) -> tuple[str, int]:
    """The site's recent money movements (the panel reloads itself when money moves)."""
    site = await owned_site(current_wallet(), site_id)
    return await part_of_page("portal/_site_activity.html", "portal/site.html",
                              lambda: site_context(site, run, "money"),
                              site=site, activity=await activity.recent(site_holder(site)))


@blueprint.get("/portal/sites/<site_id>/balance")
@account_page
@injected
async def balance(site_id: str, run: Services) -> tuple[str, int]:
    """The balance partial of a site of the signed-in wallet (what it reloads after every money movement)."""
    money = await site_balance(current_wallet(), site_id)
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    return await part_of_page("portal/_balance.html", "portal/site.html", lambda: site_context(site, run, "money"),
                              balance=money, site_id=site_id)


@blueprint.post("/portal/sites/<site_id>/topup/prepare")
@account_form
@form_view(_refused("topup"), shows=(Invalid,))
async def topup_prepare(sent: Sent, site_id: str) -> Response:
    """The approve and deposit transactions the wallet sends to top the site up with ``amount`` G$."""
    holder = await owned_site_holder(sent.wallet, site_id)
    plan = await deposits.prepare(holder, sent.command(Funds).amount, sent.run.chain)
    site = await owned_site(sent.wallet, site_id)
    return Response(await render_template("portal/_topup_send.html", plan=plan, site_id=site_id, site=site,
                                          funds=await funds_of(site, sent.run), chain_id=sent.run.chain.chain_id))


async def _credit_refused(error: DomainError, sent: Sent, site_id: str) -> Response:
    site = await owned_site(sent.wallet, site_id)
    return await form_error("portal/_deposit_credit_form.html", "#topup-credit", error, "portal/site.html",
                            lambda: site_context(site, sent.run, "money"), values=sent.form.to_dict(),
                            failed_form="topup-credit", form_name="topup",
                            action=url_for("portal_balance.topup", site_id=site_id), site=site)


@blueprint.post("/portal/sites/<site_id>/topup")
@account_form
@form_view(_credit_refused, shows=(Invalid, Conflict))  # Conflict: a hash credited to another account
async def topup(sent: Sent, site_id: str) -> Response:
    """Where the deposit ``txHash`` stands (sent, confirming, credited), crediting it once the chain shows it;
    htmx polls this partial until the deposit is credited."""
    holder = await owned_site_holder(sent.wallet, site_id)
    progress = await deposits.progress(holder, sent.command(DepositReport).tx_hash, sent.run.chain, sent.now)
    if not wants_fragment():
        await flash(f"Top-up {progress.tx_hash}: {progress.state}.")
        return see_other(_site_page(site_id))
    headers = BALANCE_CHANGED if progress.state == "credited" else {}
    return Response(await render_template("portal/_topup_status.html", progress=progress, site_id=site_id),
                    headers=headers)


@blueprint.post("/portal/sites/<site_id>/withdraw")
@account_form
@form_view(_refused("withdraw"), shows=(Invalid, Conflict))
async def withdraw(sent: Sent, site_id: str) -> Response:
    """Debit ``amount`` of ``token`` now and show the claim for the wallet to redeem on the vault; the form's
    idempotency key makes a second submission of the same rendering show the same withdrawal."""
    run = sent.run
    holder = await owned_site_holder(sent.wallet, site_id)
    order = sent.command(Withdrawal)
    result = await withdrawals.withdraw(holder, order.amount, order.token, minimum=run.settings.min_withdrawal,
                                        chain=run.chain, now=sent.now, idempotency_key=form_idempotency_key(sent.form))
    if not wants_fragment():
        await flash(f"Withdrawal of {to_decimal_string(int(result.withdrawal.amount))} "
                    f"{result.withdrawal.token_symbol} issued: redeem its claim from your wallet.")
        return see_other(_site_page(site_id))
    view = await withdrawals.view(holder, result.withdrawal.id, run.chain)
    site = await owned_site(sent.wallet, site_id)
    return Response(await render_template("portal/_withdrawal.html", view=view, site_id=site_id, site=site,
                                          funds=await funds_of(site, sent.run), fresh=True),
                    headers=BALANCE_CHANGED)


@blueprint.get("/portal/sites/<site_id>/withdrawals/<withdrawal_id>")
@account_page
@injected
async def withdrawal_status(site_id: str, withdrawal_id: str, run: Services) -> Response:
    """A withdrawal's status as the chain has it (redeemed or released only by the watcher); ``tx`` is the redeem
    transaction the wallet reported, shown as sent or mined."""
    holder = await owned_site_holder(current_wallet(), site_id)
    view = await withdrawals.view(holder, withdrawal_id, run.chain, command_of(RedeemReport, request.args).tx)
    settled = view.withdrawal.status.value != "issued"
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    body, _ = await part_of_page("portal/_withdrawal.html", "portal/site.html",
                                 lambda: site_context(site, run, "money"),
                                 view=view, site_id=holder.id, fresh=False, shown_withdrawal=view)
    return Response(body, headers=BALANCE_CHANGED if settled else {})


async def _preview_refused(error: DomainError, sent: Sent, site_id: str) -> str:
    await owned_site(sent.wallet, site_id)  # another wallet's site is refused as a page, not beside the form
    return await render_template("portal/_exchange_preview.html", error=error,
                                 empty=not sent.form.get("amount", "").strip())


@blueprint.post("/portal/sites/<site_id>/exchange/preview")
@account_form
@form_view(_preview_refused)
async def exchange_preview(sent: Sent, site_id: str) -> str:
    """What the exchange form would give at the vault's current rate, before it is confirmed."""
    site = await owned_site(sent.wallet, site_id)
    order = sent.command(ExchangeOrder)
    preview = await exchanges.preview(order.from_token, order.amount, sent.run.chain, site)
    return await render_template("portal/_exchange_preview.html", preview=preview)


@blueprint.post("/portal/sites/<site_id>/exchange")
@account_form
@form_view(_refused("exchange"), shows=(Invalid,))
async def exchange(sent: Sent, site_id: str) -> Response:
    """Convert ``amount`` of the ``from`` token into the other at the vault's rate, as ``exchanges.exchange``
    books it."""
    order = sent.command(ExchangeOrder)
    result = await exchanges.exchange(wallet=sent.wallet, site_id=site_id, from_token=order.from_token,
                                      amount=order.amount, chain=sent.run.chain, now=sent.now)
    record = result.exchange
    message = (f"Exchanged {to_decimal_string(int(record.amount_in))} {record.from_token} for "
               f"{to_decimal_string(int(record.amount_out))} {record.to_token}.")
    if not wants_fragment():
        await flash(message)
        return see_other(_site_page(site_id))
    site = await owned_site(sent.wallet, site_id)
    return Response(await render_template("portal/_exchange_form.html", site=site, funds=await funds_of(site, sent.run),
                                          values={}, done=message), headers=BALANCE_CHANGED)
