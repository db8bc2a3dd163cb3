"""What the portal's pages need beyond the publisher API's domain functions: the sign-in message the server writes
for the wallet, the progress of a top-up and of a withdrawal as the chain moves, an exchange's preview, and a
site's recent money movements.

None of this moves money: top-ups are credited by ``payouts.top_up`` (which checks the chain), withdrawals are
confirmed only by the watcher from the vault's ``Claimed`` event. A transaction hash a browser reports for a
redeem is only ever used to show how far that transaction has come on the chain.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from eth_utils import to_checksum_address
from siwe import siwe

from adnet import payouts
from adnet.auth import MAX_MESSAGE_LIFETIME, NonceGrant
from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.embed import sdk_version
from adnet.errors import ApiError, not_found
from adnet.ids import has_prefix
from adnet.models import Deposit, DepositStatus, Exchange, Withdrawal, WithdrawalStatus
from adnet.wallets import InvalidWallet, normalize_wallet

SIGN_IN_STATEMENT = "Sign in to the adnet portal."
RECENT_ITEMS = 10
MAX_SITE_NAME = 120  # Site.name's column
_TX_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")


@dataclass(frozen=True)
class TopUpProgress:
    """Where a top-up stands: ``sent`` (not mined yet), ``confirming`` (mined, ``confirmations`` of
    ``required``), or ``credited`` (the site holds ``amount``)."""

    state: str
    tx_hash: str
    confirmations: int = 0
    required: int = 0
    amount: int = 0


@dataclass(frozen=True)
class WithdrawalView:
    """A withdrawal of the site, the vault call that redeems it, and how far a reported redeem transaction is."""

    withdrawal: Withdrawal
    redeem_tx: dict[str, Any]
    redeem_hash: str | None
    redeem_mined: bool


@dataclass(frozen=True)
class ExchangePreview:
    """What an exchange would give now: ``amount_out`` of ``to_symbol`` at ``rate`` (G$ per 1e18 SOV)."""

    from_symbol: str
    to_symbol: str
    amount_in: int
    amount_out: int
    rate: int


@dataclass(frozen=True)
class SiteActivity:
    """A site's (or an advertiser's) latest deposits, withdrawals and exchanges, newest first."""

    deposits: list[Deposit]
    withdrawals: list[Withdrawal]
    exchanges: list[Exchange]


def sign_in_message(grant: NonceGrant, address: Any, now: datetime, path: str = "/portal") -> str:
    """The EIP-4361 text the wallet ``address`` signs to open a portal session: our origin, the bound chain, the
    nonce just issued, valid for the longest a session may last. 400 ``invalid_wallet`` for no address."""
    try:
        wallet = normalize_wallet(address)
    except InvalidWallet as exc:
        raise ApiError(400, "invalid_wallet", str(exc), field="address") from None
    origin = urlsplit(grant.uri)
    return siwe.SiweMessage(
        scheme=origin.scheme, domain=grant.domain, address=to_checksum_address(wallet), uri=grant.uri + path,
        version="1", chain_id=grant.chain_id, issued_at=siwe.ISO8601Datetime.from_datetime(now),
        expiration_time=siwe.ISO8601Datetime.from_datetime(now + MAX_MESSAGE_LIFETIME), nonce=grant.nonce,
        statement=SIGN_IN_STATEMENT,
    ).prepare_message()


async def top_up_progress(*, wallet: str, site_id: str, tx_hash: str, chain: ChainClient,
                          now: datetime) -> TopUpProgress:
    """Credit the deposit ``tx_hash`` to the site if the chain shows it (``payouts.top_up``), and say where it
    stands. Refusals other than "not mined yet" and "credited before" propagate as ``payouts.top_up`` raises them."""
    return await deposit_progress(
        lambda: payouts.top_up(wallet=wallet, site_id=site_id, tx_hash=tx_hash, chain=chain, now=now), tx_hash, chain)


async def deposit_progress(credit: Callable[[], Awaitable[Deposit]], tx_hash: str,
                           chain: ChainClient) -> TopUpProgress:
    """Run ``credit`` (a site's top-up or an advertiser's deposit, which checks the chain and credits once) and say
    where the deposit ``tx_hash`` stands: not mined yet is ``sent``, credited before is ``credited``; other
    refusals propagate."""
    try:
        deposit = await credit()
    except ApiError as exc:
        if exc.code == "transaction_not_found":
            return TopUpProgress("sent", tx_hash.lower())
        if exc.code != "already_credited":
            raise
        deposit = await Deposit.get(id=exc.extra["depositId"])
    if deposit.status == DepositStatus.CREDITED:
        return TopUpProgress("credited", deposit.tx_hash, amount=int(deposit.amount))
    confirmations = await _confirmations(chain, deposit.block_number)
    return TopUpProgress("confirming", deposit.tx_hash, confirmations=confirmations, required=chain.confirmations,
                         amount=int(deposit.amount))


async def withdrawal_view(*, withdrawal_id: Any, chain: ChainClient, site_id: str | None = None,
                          advertiser_id: str | None = None, redeem_hash: Any = None) -> WithdrawalView:
    """The withdrawal ``withdrawal_id`` of the site ``site_id`` or of the advertiser ``advertiser_id`` (whose
    ownership the caller has checked), 404 otherwise; with the redeem transaction for its recipient, and whether
    ``redeem_hash`` is mined yet."""
    if not isinstance(withdrawal_id, str) or not has_prefix(withdrawal_id, "wd") or not (site_id or advertiser_id):
        raise not_found("withdrawal")
    owner = {"site_id": site_id} if site_id else {"advertiser_id": advertiser_id}
    withdrawal = await Withdrawal.get_or_none(id=withdrawal_id, **owner).select_related("claim")
    if withdrawal is None:
        raise not_found("withdrawal")
    shown_hash = redeem_hash.lower() if isinstance(redeem_hash, str) and _TX_HASH.match(redeem_hash) else None
    mined = False
    if shown_hash and withdrawal.status == WithdrawalStatus.ISSUED:
        try:
            mined = await chain.get_receipt(shown_hash) is not None
        except ChainUnavailable:
            mined = False
    return WithdrawalView(withdrawal=withdrawal, redeem_tx=chain.build_claim_tx(withdrawal.wallet, withdrawal.claim),
                          redeem_hash=shown_hash, redeem_mined=mined)


async def exchange_preview(*, from_symbol: str, amount: int, chain: ChainClient) -> ExchangePreview:
    """What ``amount`` of ``from_symbol`` converts to at the vault's current rate (as ``payouts.exchange`` would
    book it); 503 ``chain_unavailable`` when the rate cannot be read."""
    rate = await current_rate(chain)
    to_symbol = "G$" if from_symbol == "SOV" else "SOV"
    return ExchangePreview(from_symbol, to_symbol, amount, payouts.convert(amount, from_symbol, rate), rate)


async def current_rate(chain: ChainClient) -> int:
    """The vault's protocol rate (G$ per 1e18 SOV); 503 ``chain_unavailable`` when it cannot be read."""
    try:
        return await chain.rate()
    except ChainUnavailable:
        raise ApiError(503, "chain_unavailable", "The vault's rate cannot be read; retry later.",
                       retryAfter=10) from None


async def site_activity(site_id: str) -> SiteActivity:
    """The latest ``RECENT_ITEMS`` deposits, withdrawals and exchanges of a site."""
    return SiteActivity(
        deposits=await Deposit.filter(site_id=site_id).order_by("-created_at", "-id").limit(RECENT_ITEMS),
        withdrawals=await Withdrawal.filter(site_id=site_id).order_by("-created_at", "-id").limit(RECENT_ITEMS),
        exchanges=await Exchange.filter(site_id=site_id).order_by("-created_at", "-id").limit(RECENT_ITEMS),
    )


async def advertiser_activity(advertiser_id: str) -> SiteActivity:
    """The latest ``RECENT_ITEMS`` deposits and withdrawals of an advertiser (advertisers make no exchanges)."""
    return SiteActivity(
        deposits=await Deposit.filter(advertiser_id=advertiser_id).order_by("-created_at", "-id").limit(RECENT_ITEMS),
        withdrawals=await Withdrawal.filter(advertiser_id=advertiser_id).order_by("-created_at", "-id").limit(
            RECENT_ITEMS),
        exchanges=[],
    )


async def _confirmations(chain: ChainClient, block_number: int) -> int:
    try:
        return max(0, await chain.block_number() - block_number)
    except ChainUnavailable:
        return 0


def site_name_of(text: Any) -> str:
    """A site's display name from a form: trimmed, at most ``MAX_SITE_NAME`` characters (400 ``invalid_name``)."""
    name = text.strip() if isinstance(text, str) else ""
    if len(name) > MAX_SITE_NAME:
        raise ApiError(400, "invalid_name", f"A site's name is at most {MAX_SITE_NAME} characters.", field="name")
    return name


@dataclass(frozen=True)
class Snippet:
    key: str
    title: str
    code: str


def embed_snippets(public_url: str, site_id: str) -> list[Snippet]:
    """The HTML a publisher pastes into its pages: the SDK script once, and a slot for banners or for units (as
    plain text; the page escapes it)."""
    script = f'<script async src="{public_url}/sdk/{sdk_version()}/sdk.js" data-site-id="{site_id}"></script>'
    return [
        Snippet("script", "Script (once per page, before </body>)", script),
        Snippet("banner", "Banner slot", '<div data-adnet-slot data-kind="BANNER" data-size="300x250" '
                                         'data-placement="sidebar"></div>'),
        Snippet("units", "Unit slot (polls, feedback, surveys)",
                '<div data-adnet-slot data-kind="POLL,FEEDBACK,SURVEY" data-placement="article-end"></div>'),
    ]
