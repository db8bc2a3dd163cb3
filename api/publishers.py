"""The publisher API under /api/publishers: register, sites, balance, topup (and its preparation), withdraw,
exchange (rules in adnet.accounts.sites and adnet.money; figures from adnet.reporting).

Every route needs a session (401 ``auth_required``), and the wallet the request names, in the body or, for GETs,
the query, must be the session's (403 ``not_owner``) and own the site it names (403 ``not_owner``).
Token amounts travel as decimal strings.
"""

from __future__ import annotations

from pydantic import Field
from quart import Blueprint, Response, jsonify
from quart_rate_limiter import rate_limit
from quart_schema import validate_querystring, validate_request

from adnet.accounts.commands import SiteRegistration
from adnet.accounts.sites import register_site
from adnet.core.amounts import to_decimal_string
from adnet.core.inputs import Command, WalletAddress
from adnet.money import deposits, exchanges, withdrawals
from adnet.money.claims import claim_payload
from adnet.money.commands import DepositReport, ExchangeOrder, Funds, Withdrawal
from adnet.money.holders import owned_site_holder
from adnet.money.models import DepositStatus
from adnet.reporting import dashboard
from adnet.reporting.balances import site_balance
from api.auth import iso
from api.http import services
from api.ratelimit import settings_limit
from api.sessions import named_wallet, require_session

blueprint = Blueprint("api_publishers", __name__, url_prefix="/api")

ACCOUNT_LIMIT = settings_limit("rate_limit_account")


class WalletNamed(Command):
    """The wallet a publisher request names: the signed-in one."""

    wallet: WalletAddress


class SiteNamed(WalletNamed):
    """A site of the wallet the request names."""

    site_id: str = Field(max_length=64)


class RegisterRequest(SiteRegistration, WalletNamed):
    """A site to register for the wallet."""


class TopUpPrepareRequest(Funds, SiteNamed):
    """G$ to deposit for the site."""


class TopUpRequest(DepositReport, SiteNamed):
    """A deposit for the site to credit."""


class WithdrawRequest(Withdrawal, SiteNamed):
    """An amount to withdraw from the site's balance."""


class ExchangeRequest(ExchangeOrder, SiteNamed):
    """An amount of the site's balance to convert."""


@blueprint.post("/publishers/register")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(RegisterRequest)
async def register(data: RegisterRequest) -> tuple[Response, int]:
    """Register a site (domain normalised, IDN in punycode); the wallet's first registration creates its publisher
    record. 201 when created, 200 when the wallet had registered this domain before, 409 when another wallet has."""
    registration = await register_site(named_wallet(data.wallet), data, services().clock.now())
    body = {"siteId": registration.site.id, "publisherId": registration.publisher.id,
            "domain": registration.site.domain}
    return jsonify(body), 201 if registration.created else 200


@blueprint.get("/publishers/sites")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_querystring(WalletNamed)
async def sites(query_args: WalletNamed) -> Response:
    """The wallet's sites with today's (UTC) and lifetime impressions, clicks and earnings."""
    wallet = named_wallet(query_args.wallet)
    summaries = await dashboard.list_sites(wallet, services().clock.now())
    return jsonify({"wallet": wallet, "sites": [_site_body(summary) for summary in summaries]})


@blueprint.get("/publishers/balance")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_querystring(SiteNamed)
async def balance(query_args: SiteNamed) -> Response:
    """A site's lifetime earnings, claimable balance and pending withdrawals (G$), and its SOV balance."""
    money = await site_balance(named_wallet(query_args.wallet), query_args.site_id)
    return jsonify({
        "siteId": money.site_id, "token": "G$", "earned": to_decimal_string(money.earned),
        "claimable": to_decimal_string(money.claimable),
        "pendingWithdrawals": to_decimal_string(money.pending_withdrawals),
        "sov": {"claimable": to_decimal_string(money.sov_claimable),
                "pendingWithdrawals": to_decimal_string(money.sov_pending_withdrawals)},
    })


@blueprint.post("/publishers/topup/prepare")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(TopUpPrepareRequest)
async def topup_prepare(data: TopUpPrepareRequest) -> Response:
    """The unsigned approve and deposit transactions (EIP-1193 ``eth_sendTransaction`` parameters) that top up the
    site with ``amount`` G$; send them in order from the wallet, then post the deposit's hash to /topup."""
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    plan = deposits.prepare(holder, data.amount, services().chain)
    return jsonify({"siteId": holder.id, "token": "G$", "amount": to_decimal_string(plan.amount),
                    "accountRef": holder.account_ref, "transactions": [plan.approve, plan.deposit]})


@blueprint.post("/publishers/topup")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(TopUpRequest)
async def topup(data: TopUpRequest) -> tuple[Response, int]:
    """Credit the site with a G$ deposit the wallet made to the vault: 201 credited, 202 pending until its
    confirmations (the watcher credits it then), 409 when the transaction was credited before."""
    run = services()
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    deposit = await deposits.credit(holder, data.tx_hash, run.chain, run.clock.now())
    body = {"depositId": deposit.id, "siteId": data.site_id, "txHash": deposit.tx_hash, "token": deposit.token_symbol,
            "amount": to_decimal_string(int(deposit.amount)), "status": deposit.status.value}
    return jsonify(body), 201 if deposit.status == DepositStatus.CREDITED else 202


@blueprint.post("/publishers/withdraw")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(WithdrawRequest)
async def withdraw(data: WithdrawRequest) -> tuple[Response, int]:
    """Debit ``amount`` from the site's claimable balance now and return the signed claim that pays it out on the
    vault (``transaction``); released back to the site if not redeemed by its deadline."""
    run = services()
    holder = await owned_site_holder(named_wallet(data.wallet), data.site_id)
    result = await withdrawals.withdraw(holder, data.amount, data.token,
                                        minimum=run.settings.min_withdrawal, chain=run.chain, now=run.clock.now())
    withdrawal = result.withdrawal
    return jsonify({"withdrawalId": withdrawal.id, "siteId": data.site_id, "token": withdrawal.token_symbol,
                    "amount": to_decimal_string(int(withdrawal.amount)), "status": withdrawal.status.value,
                    "createdAt": iso(withdrawal.created_at), "transaction": claim_payload(result.claim)}), 201


@blueprint.post("/publishers/exchange")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@validate_request(ExchangeRequest)
async def exchange(data: ExchangeRequest) -> tuple[Response, int]:
    """Convert claimable balance between SOV and G$ at the vault's protocol rate, rounded down; returns both legs
    and the rate (G$ per SOV)."""
    run = services()
    result = await exchanges.exchange(
        wallet=named_wallet(data.wallet), site_id=data.site_id, from_token=data.from_token, amount=data.amount,
        chain=run.chain, now=run.clock.now())
    record = result.exchange
    return jsonify({"exchangeId": record.id, "siteId": data.site_id,
                    "from": {"token": record.from_token, "amount": to_decimal_string(int(record.amount_in))},
                    "to": {"token": record.to_token, "amount": to_decimal_string(int(record.amount_out))},
                    "rate": to_decimal_string(result.rate)}), 201


def _site_body(summary: dashboard.SiteSummary) -> dict:
    site = summary.site
    return {
        "siteId": site.id, "domain": site.domain, "name": site.name, "active": site.active,
        "createdAt": iso(site.created_at),
        "today": _figures(summary.today), "lifetime": _figures(summary.lifetime),
    }


def _figures(figures: dashboard.Figures) -> dict:
    return {"impressions": figures.impressions, "clicks": figures.clicks, "earned": to_decimal_string(figures.earned)}
