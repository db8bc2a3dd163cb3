"""Proving a wallet for a click: the landing page's snippet (``static/conversions.js``) has the visitor's wallet sign,
with EIP-191 (``personal_sign``), a fixed message naming the click id it received, and posts the click id, the
wallet and the signature to ``POST /api/conversions/bind``.

The binding is what lets a wallet's on-chain activity count as a conversion of the click (``adnet.conversions
.onchain``): a wallet a page merely names proves nothing (a publisher could name known active wallets and earn
from their organic activity, KNOWN-HOLES 31). The message names the click id, so a signature binds the one click it
was made for: posted with another click's id it is not the wallet's signature of that click's message, and is
refused (401 ``invalid_signature``) like any other bad signature, by ``check_wallet_signature``, which also accepts
a contract wallet's (EIP-1271). A click has one wallet, the first proven for it: the click's id is the binding's
primary key, so a repeated binding of the same wallet answers the first, and another wallet's is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from tortoise.exceptions import IntegrityError

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.chain.signatures import check_wallet_signature
from adnet.conversions.clicks import ClickIdError, verify_click_id
from adnet.conversions.commands import WalletBinding
from adnet.conversions.models import ClickBinding
from adnet.core.errors import Conflict, Invalid, chain_unavailable

log = logging.getLogger(__name__)

MESSAGE = "Connect this wallet to my click on an adnet ad.\n\nClick: {click_id}"


def binding_message(click_id: str) -> str:
    """The text a wallet signs to be proven for the click ``click_id`` (docs/conversions.md quotes it)."""
    return MESSAGE.format(click_id=click_id)


@dataclass(frozen=True)
class Bound:
    """The click's binding, and whether this request made it (False: the same wallet was proven for it before)."""

    binding: ClickBinding
    created: bool


async def bind_wallet(chain: ChainClient, request: WalletBinding, *, secrets: Sequence[str], now: datetime) -> Bound:
    """Prove ``request.wallet`` for the click its click id names. Invalid ``click_invalid`` for a click id that does
    not verify (or is older than any goal's window), InvalidSignature when the signature is not the wallet's of the
    click's message, Conflict ``click_already_bound`` when another wallet was proven for the click first,
    Unavailable ``chain_unavailable`` when a contract wallet could not be asked."""
    try:
        claims = verify_click_id(request.click_id, secrets=secrets, now=now)
    except ClickIdError:
        raise Invalid("click_invalid", "clickId is not a click id adnet issued in the last 30 days.",
                      field="clickId") from None
    try:
        await check_wallet_signature(chain, request.wallet, binding_message(request.click_id), request.signature)
    except ChainUnavailable:
        raise chain_unavailable("The chain cannot be reached to check a contract wallet") from None
    try:
        binding = await ClickBinding.create(
            click_event_id=claims.event_id, campaign_id=claims.campaign_id, site_id=claims.site_id,
            creative_id=claims.ad_id, wallet=request.wallet, clicked_at=claims.issued_at, bound_at=now)
    except IntegrityError:
        first = await ClickBinding.get(click_event_id=claims.event_id)
        if first.wallet != request.wallet:
            raise Conflict("click_already_bound", "Another wallet was proven for this click first.") from None
        return Bound(first, created=False)
    log.info("click bound click=%s campaign=%s wallet=%s", claims.event_id, claims.campaign_id, request.wallet)
    return Bound(binding, created=True)
