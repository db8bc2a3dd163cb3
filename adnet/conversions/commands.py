"""What an advertiser's server reports: a conversion to record."""

from __future__ import annotations

from typing import Annotated, ClassVar, Self

from pydantic import Field, StringConstraints, model_validator

from adnet.conversions.clicks import MAX_CLICK_ID_LENGTH
from adnet.core.inputs import Amount, Command, Instant, WalletAddress, id_of, rule

OrderId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[\x21-\x7e]+$"), Field(
    description="the advertiser's id of the order or sign-up (printable ASCII, no spaces): one conversion each")]
ClickId = Annotated[str, StringConstraints(min_length=1, max_length=MAX_CLICK_ID_LENGTH)]


class _Order(Command):
    """What every report of a conversion names: its goal, the order id and optionally the order's value."""

    goal_id: Annotated[str, id_of("goal")]
    order_id: OrderId
    value: Amount | None = Field(None, description="the order's value in G$, for reports")


class PublicConversion(_Order):
    """A conversion of a goal marked ``public``, which the advertiser's page reports itself (the pixel or beacon):
    the click id the landing page received, the goal, the order id and optionally the order's value. Nothing else:
    it happens when it is received, and a wallet a page names proves nothing."""

    click_id: ClickId = Field(description="what the landing page received in the campaign's click parameter")


class ConversionReport(_Order):
    """A conversion the advertiser's server reports: the click id its landing page received, the goal, the order
    id, and optionally the order's value, when it happened and the wallet its own sign-in proved. Without a click
    id it names that wallet, which may attribute it to an impression the wallet was proven for (view-through)."""

    click_id: ClickId | None = Field(None, description="what the landing page received in the campaign's click "
                                                       "parameter; without it, ``wallet`` is required")
    occurred_at: Instant | None = Field(None, description="when it happened; default: when it is received")
    wallet: WalletAddress | None = Field(None, description="a wallet the advertiser's own sign-in proved")

    @model_validator(mode="after")
    def _click_or_wallet(self) -> Self:
        if self.click_id is None and self.wallet is None:
            raise rule("missing_field", "a conversion names its clickId, or the wallet it is of", at="clickId")
        return self


class WalletBinding(Command):
    """A wallet proven for a click: the click id the landing page received, the wallet, and its EIP-191 signature
    of the binding message naming the click id (``adnet.conversions.binding.binding_message``). The signature is
    checked, never stored, so any text in it reaches that check (``invalid_signature``)."""

    UNSTORED_TEXT: ClassVar[frozenset[str]] = frozenset({"signature"})

    click_id: ClickId = Field(description="what the landing page received in the campaign's click parameter")
    wallet: WalletAddress
    signature: str = Field(description="the wallet's personal_sign of the binding message, 0x-prefixed hex")
