"""What a publisher, an advertiser or an operator asks of money: amounts to move, a withdrawal, an exchange, a
deposit to credit, a new protocol rate."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from adnet.core.amounts import Token
from adnet.core.inputs import Amount, Command, TokenSymbol, TxHash
from adnet.db.cursors import Cursor


class Funds(Command):
    """G$ to move: into the vault, into a campaign's budget or a task's pool, or out to the wallet."""

    amount: Amount


class Withdrawal(Command):
    """An amount of a token to take out of a balance, paid by a signed claim."""

    amount: Amount
    token: TokenSymbol = Token.GS


class WithdrawalPage(Command):
    """Which of an account's withdrawals to list: the newest ``limit``, or those older than ``before`` (the last
    withdrawal id of the previous page)."""

    limit: int = Field(50, ge=1, le=100, description="how many, newest first (at most 100)")
    before: Annotated[str, Cursor("wd")] | None = Field(
        None, description="the next of the previous page: list the withdrawals older than its last")


class ExchangeOrder(Command):
    """An amount of one token to convert into the other at the vault's rate."""

    from_token: TokenSymbol = Field(alias="from")
    amount: Amount


class DepositReport(Command):
    """A deposit transaction the wallet sent to the vault, to credit."""

    tx_hash: TxHash


class RedeemReport(Command):
    """The transaction by which the wallet says it redeemed a withdrawal's claim, if it sent one yet."""

    tx: TxHash | None = None


class NewRate(Command):
    """The vault's protocol rate to set, in G$ per SOV."""

    rate: Amount = Field(description="G$ per SOV, a decimal string")
    send: bool = Field(False, description="development chain only: send it with the deployer's key")
