"""Wallet audiences: the targeting rules that read a viewer's wallet on adnet's chain, as the advertiser writes them.

A rule is one of:

- ``erc20``: holds at least ``minAmount`` (smallest units) of the ERC-20 at ``contract``;
- ``erc721``: holds at least one token of the ERC-721 collection at ``contract``;
- ``erc1155``: holds at least ``minAmount`` (default 1) of token ``tokenId`` of the ERC-1155 at ``contract``;
- ``event``: the event ``topic0`` of ``contract`` named the wallet (in ``walletField``, ``topic1`` to ``topic3``: an
  indexed ``address`` argument) within the last ``days`` days: "has used this contract" as its logs show it;
- ``txCount``: the wallet sent at least ``min`` transactions (its nonce on adnet's chain): the approximation of a
  wallet's age adnet offers, since a chain keeps no "first seen" a node answers cheaply;
- ``injectedWallet``: the page found a wallet extension in the browser (the embed reports only whether
  ``window.ethereum`` exists): a weak signal that proves nothing and needs no proven wallet.

Rules combine as the other targeting rules do: ``audienceGroups`` is a list of groups, a group holds when all its
rules hold and the campaign may serve when any group holds (none: no limit); ``audienceExclude`` refuses a viewer
any of whose rules holds, and an exclude wins. Every rule but ``injectedWallet`` reads the chain, so it counts only
for a wallet the viewer proved (``adnet.audiences``); an unknown answer is never a match, and a campaign with an
exclusion is not shown to a wallet whose answer to it is not known yet.

Each chain rule has a ``key`` (a digest of its canonical form): campaigns naming the same rule share its
evaluation, and what adnet keeps about a wallet is which keys it matched.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints

from adnet.core.inputs import Command, Topic, Uint256, WalletAddress, rule

MAX_GROUPS = 10
MAX_RULES_PER_GROUP = 10
MAX_EXCLUDES = 10
MAX_EVENT_DAYS = 90
INJECTED = "injectedWallet"


class _Rule(Command):
    model_config = ConfigDict(**Command.model_config, extra="forbid", serialize_by_alias=True)

    @property
    def key(self) -> str:
        """The rule's identity: the same rule written by two campaigns has the same key."""
        canonical = json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True, separators=(",", ":"))
        return "aud_" + hashlib.sha256(canonical.encode()).hexdigest()[:24]

    @property
    def on_chain(self) -> bool:
        return True


def _positive(value: int) -> int:
    if value < 1:
        raise rule("invalid_amount", "at least 1")
    return value


PositiveUint = Annotated[Uint256, AfterValidator(_positive)]


class HoldsToken(_Rule):
    """Holds at least ``minAmount`` of an ERC-20."""

    kind: Literal["erc20"]
    contract: WalletAddress = Field(description="the ERC-20 token's address on adnet's chain")
    min_amount: PositiveUint = Field(description="the least balance, in the token's smallest unit")


class HoldsCollectible(_Rule):
    """Holds at least one token of an ERC-721 collection."""

    kind: Literal["erc721"]
    contract: WalletAddress = Field(description="the ERC-721 collection's address on adnet's chain")


class HoldsItem(_Rule):
    """Holds at least ``minAmount`` of one token id of an ERC-1155 collection."""

    kind: Literal["erc1155"]
    contract: WalletAddress = Field(description="the ERC-1155 collection's address on adnet's chain")
    token_id: Uint256 = Field(description="the token id, as a decimal string")
    min_amount: PositiveUint = Field(1, description="the least balance of that id")


class UsedContract(_Rule):
    """The contract emitted the event naming the wallet within the last ``days`` days."""

    kind: Literal["event"]
    contract: WalletAddress = Field(description="the contract that emits the event")
    topic0: Topic
    wallet_field: Annotated[str, StringConstraints(pattern=r"^topic[1-3]$")] = Field(
        "topic1", description="where the event names the wallet: topic1 to topic3 (an indexed address argument)")
    days: int = Field(30, ge=1, le=MAX_EVENT_DAYS, description="how far back the event counts")


class SentTransactions(_Rule):
    """Sent at least ``min`` transactions (the wallet's nonce)."""

    kind: Literal["txCount"]
    min: int = Field(ge=1, le=1_000_000, description="the least number of transactions the wallet sent")


class InjectedWallet(_Rule):
    """The page found a wallet extension in the browser: reported by the embed, proves nothing."""

    kind: Literal["injectedWallet"]

    @property
    def key(self) -> str:
        return INJECTED

    @property
    def on_chain(self) -> bool:
        return False


AudienceRule = Annotated[HoldsToken | HoldsCollectible | HoldsItem | UsedContract | SentTransactions | InjectedWallet,
                         Field(discriminator="kind")]
ChainRule = HoldsToken | HoldsCollectible | HoldsItem | UsedContract | SentTransactions
Group = Annotated[list[AudienceRule], Field(min_length=1, max_length=MAX_RULES_PER_GROUP)]
GroupList = Annotated[list[Group], Field(max_length=MAX_GROUPS)]
ExcludeList = Annotated[list[AudienceRule], Field(max_length=MAX_EXCLUDES)]


def chain_rules(groups: list[list[Any]], exclude: list[Any]) -> dict[str, ChainRule]:
    """The chain rules of a campaign's audience, by key."""
    return {item.key: item for group in groups for item in group if item.on_chain} | {
        item.key: item for item in exclude if item.on_chain}


def describe(item: ChainRule | InjectedWallet) -> str:
    """The rule in words, for the viewer who is in its audience and the reviewer who approves it."""
    if isinstance(item, HoldsToken):
        return f"holds at least {item.min_amount} (smallest units) of the token {item.contract}"
    if isinstance(item, HoldsCollectible):
        return f"holds a token of the collection {item.contract}"
    if isinstance(item, HoldsItem):
        return f"holds at least {item.min_amount} of token {item.token_id} of the collection {item.contract}"
    if isinstance(item, UsedContract):
        return f"used the contract {item.contract} (its event {item.topic0[:10]}…) in the last {item.days} days"
    if isinstance(item, SentTransactions):
        return f"sent at least {item.min} transactions"
    return "has a wallet extension in the browser"
