"""Who holds money adnet owes and can take it out: a site (paid to its publisher's wallet) or an advertiser.

Deposits credit a holder and withdrawals debit one the same way whichever it is; a ``Holder`` says which ledger
account that is, which ``accountRef`` a vault deposit names to credit it, and where its records point.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from eth_hash.auto import keccak

from adnet.accounts.models import Advertiser, Site
from adnet.accounts.sites import owned_site
from adnet.core.amounts import Token
from adnet.money import ledger


@dataclass(frozen=True)
class Holder:
    """A site or an advertiser, with the wallet its withdrawals pay."""

    kind: Literal["site", "advertiser"]
    id: str
    wallet: str

    def account(self, token: Token = Token.GS) -> ledger.AccountKey:
        """The ledger account of the holder's balance in ``token``."""
        return ledger.site(self.id, token) if self.kind == "site" else ledger.advertiser(self.id, token)

    @property
    def account_ref(self) -> str:
        """The vault ``accountRef`` that credits this holder: keccak256 of its id (UTF-8), 0x-hex."""
        return account_ref(self.id)

    @property
    def record(self) -> dict[str, Any]:
        """The foreign key of a deposit or withdrawal of this holder."""
        return {f"{self.kind}_id": self.id}

    @property
    def balance_name(self) -> str:
        """The balance withdrawals take from, as a person calls it."""
        return "the site's claimable balance" if self.kind == "site" else "the advertiser's unallocated balance"

    @property
    def balance_key(self) -> str:
        """The key of an error body that says how much that balance holds."""
        return "claimable" if self.kind == "site" else "available"


def site_holder(site: Site) -> Holder:
    """A site as a holder; its publisher must be loaded (``select_related("publisher")``)."""
    return Holder("site", site.id, site.publisher.wallet)


def advertiser_holder(advertiser: Advertiser) -> Holder:
    return Holder("advertiser", advertiser.id, advertiser.wallet)


def account_ref(owner_id: str) -> str:
    """keccak256 of a site's or advertiser's id (UTF-8), 0x-hex: the ``accountRef`` of a vault deposit to it."""
    return "0x" + keccak(owner_id.encode()).hex()


async def owned_site_holder(wallet: str, site_id: object) -> Holder:
    """The site ``site_id`` as a holder, when ``wallet`` owns it (the refusals of ``owned_site`` otherwise)."""
    return site_holder(await owned_site(wallet, site_id))
