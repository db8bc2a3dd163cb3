"""Deleting a site: only once nothing is owed to it, so no earning is left behind where its owner no longer looks.

A site may be deleted while its claimable balance is zero in every token and none of its withdrawals is still
issued (a withdrawal not redeemed by its deadline comes back to the balance). Otherwise Conflict
``site_has_balance`` says what is left: withdraw it, or wait for the issued claims to be redeemed or released.
A deleted site stops serving at once, gives up its verified domain (another site may prove it) and leaves the
owner's listings; its events, ledger and withdrawals stay. The balance is read when the site is deleted, not locked
against later postings, so money that still reaches it afterwards (a vault deposit naming it that the watcher
credits late, a billing of an event recorded just before) is not lost: it stays withdrawable, as the balance and
withdrawal routes take a deleted site's id.
"""

from __future__ import annotations

import logging
from datetime import datetime

from tortoise.transactions import in_transaction

from adnet.accounts.models import Site
from adnet.accounts.ownership import release_domain
from adnet.accounts.sites import managed_site, site_deleted
from adnet.core import changes
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict
from adnet.money.models import LedgerAccount, Withdrawal, WithdrawalStatus

log = logging.getLogger(__name__)


async def delete_site(wallet: str, site_id: object, now: datetime) -> Site:
    """Delete the wallet's site (the refusals of ``managed_site``), or Conflict ``site_has_balance`` with its
    ``claimable`` balances (decimal strings per token) and ``pendingWithdrawals`` when something is owed to it."""
    site = await managed_site(wallet, site_id)
    async with in_transaction():
        owed = {account.token: int(account.balance)
                for account in await LedgerAccount.filter(kind="site", owner=site.id) if int(account.balance) != 0}
        pending = await Withdrawal.filter(site_id=site.id, status=WithdrawalStatus.ISSUED).count()
        if owed or pending:
            raise Conflict("site_has_balance", "The site is still owed money: withdraw its balance and let its "
                                               "claims be redeemed or released before deleting it.",
                           claimable={token: to_decimal_string(amount) for token, amount in owed.items()},
                           pendingWithdrawals=pending)
        if not await Site.filter(id=site.id, deleted_at=None).update(deleted_at=now, active=False):
            raise site_deleted()
    await release_domain(site, now)
    log.info("site deleted site=%s domain=%s", site.id, site.domain)
    changes.announce(site.id)
    return await Site.get(id=site.id)
