"""What the vault's events mean for the books: a ``Deposited`` event credits the site or advertiser its
accountRef names (``adnet.money.deposits``), a ``Claimed`` event marks the claim redeemed
(``adnet.money.claims``). The chain watcher hands every confirmed event here, in chain order, any number of times.
"""

from __future__ import annotations

import logging
from datetime import datetime

from adnet.chain.client import ClaimedEvent, DepositEvent
from adnet.money import claims, deposits, ledger

log = logging.getLogger(__name__)


async def apply(event: DepositEvent | ClaimedEvent, now: datetime) -> bool:
    """Book the event; returns whether this call changed anything (a repeat changes nothing)."""
    if isinstance(event, DepositEvent):
        return (await deposits.record_deposit(event, confirmed=True, now=now)).credited_now
    try:
        return await claims.mark_redeemed(event.claim_ref, event.tx_hash, now)
    except ledger.InsufficientFunds:
        log.error("claim redeemed after expiry cannot be taken back; settle by hand claim_ref=%s tx=%s",
                  event.claim_ref, event.tx_hash)
        return False
