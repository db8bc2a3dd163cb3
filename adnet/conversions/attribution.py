"""The rules of a reported conversion, as a pure decision: whether it is attributed to its click, and whether it is
paid. No I/O: ``adnet.conversions.recording`` loads the facts in its transaction, calls ``decide`` and writes what
it returns, and the database still guards what must be exact (one conversion per campaign and order id, the wallet
slots of a goal, the campaign's ledger account that cannot go negative, the locked spend of the day).

Attribution is to the click the conversion names by its click id: the last click the viewer made before converting
is the one whose id the landing page kept, so the last click wins across publishers. A conversion with no click
may attribute to an impression its proven wallet was seen with (view-through, ``adnet.conversions.views``): the
same rules, with the impression in place of the click and the goal's view window in place of its click window.
The reasons, in the order they are decided (the first that applies wins), none of which is ever paid:

- ``click_invalid``: the click id does not verify (malformed, not signed by adnet), names another campaign than the
  goal's, or names no recorded click (``adnet.conversions.clicks``);
- ``wallet_unbound``: an on-chain goal's event from a wallet proven for no click of the campaign
  (``adnet.conversions.onchain``);
- ``before_click``: the conversion happened before its click;
- ``outside_window``: it happened after the goal's click window had closed;
- ``click_filtered``: the click was recorded but not billed (``adnet.delivery.tracking.REASONS``);
- the refusals of where the campaign may be paid (``adnet.campaigns.eligibility.refusal``, as the click's site and
  the campaign stand now): ``site_inactive``, ``site_unverified``, ``site_excluded``, ``site_blocked``;
- ``wallet_cap_reached``: the proven wallet already has the goal's ``walletCap`` attributed conversions;
- ``client_network_limit``: the goal already has ``ADNET_CONVERSION_NETWORK_LIMIT`` attributed conversions today
  whose clicks came from the click's client network (``adnet.delivery.clients.network``).

A conversion none of those stands against is attributed; when its goal has a CPA it is paid, unless
``budget_exhausted`` (the campaign's remaining budget cannot pay the CPA) or ``daily_cap_reached`` (the CPA would
take the campaign's spend of the UTC day past its daily cap). A paid conversion costs the campaign the goal's CPA;
the click's site earns the publisher's share (``ADNET_PUBLISHER_SHARE_BPS``, rounded down) and the platform the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

REASONS = (
    "click_invalid", "wallet_unbound", "before_click", "outside_window", "click_filtered", "site_inactive",
    "site_unverified", "site_excluded", "site_blocked", "wallet_cap_reached", "client_network_limit",
    "budget_exhausted", "daily_cap_reached",
)


@dataclass(frozen=True)
class Click:
    """The recorded click a conversion names: when it was recorded and whether it was billed."""

    clicked_at: datetime
    billable: bool


@dataclass(frozen=True)
class Facts:
    """What the rules read for one conversion. ``click`` is None with ``click_reason`` saying why there is none;
    ``site_refusal`` is the eligibility rule's answer for the click's site; ``wallet_slots_used`` how many
    attributed conversions of the goal the proven wallet already has (None without a wallet);
    ``network_used`` how many attributed conversions of the goal the click's client network has today (None when
    not counted: no click, or no ``network_limit``); ``remaining`` and ``spent_today`` are read only when the goal
    has a price."""

    occurred_at: datetime
    window: timedelta
    click: Click | None
    click_reason: str | None = None
    site_refusal: str | None = None
    wallet_cap: int = 1
    wallet_slots_used: int | None = None
    network_limit: int = 0
    network_used: int | None = None
    cpa: int = 0
    remaining: int = 0
    daily_cap: int | None = None
    spent_today: int = 0


@dataclass(frozen=True)
class Outcome:
    """What becomes of a conversion: attributed or not, paid or not, the reason (None when attributed and paid, or
    attributed to an unpriced goal), and what it costs the campaign and earns the site."""

    attributed: bool
    paid: bool
    reason: str | None
    cost: int = 0
    publisher_amount: int = 0


def decide(facts: Facts, share_bps: int) -> Outcome:
    """Attribute and price one conversion (see the module's docstring for the rules and their order)."""
    reason = attribution_refusal(facts)
    if reason is not None:
        return Outcome(attributed=False, paid=False, reason=reason)
    if facts.cpa <= 0:
        return Outcome(attributed=True, paid=False, reason=None)
    if facts.remaining < facts.cpa:
        return Outcome(attributed=True, paid=False, reason="budget_exhausted")
    if facts.daily_cap is not None and facts.spent_today + facts.cpa > facts.daily_cap:
        return Outcome(attributed=True, paid=False, reason="daily_cap_reached")
    return Outcome(attributed=True, paid=True, reason=None, cost=facts.cpa,
                   publisher_amount=facts.cpa * share_bps // 10_000)


def attribution_refusal(facts: Facts) -> str | None:
    """The first rule that keeps the conversion from its click, or None when it is attributed."""
    click = facts.click
    if click is None:
        return facts.click_reason or "click_invalid"
    if facts.occurred_at < click.clicked_at:
        return "before_click"
    if facts.occurred_at > click.clicked_at + facts.window:
        return "outside_window"
    if not click.billable:
        return "click_filtered"
    if facts.site_refusal is not None:
        return facts.site_refusal
    return limit_refusal(facts)


def limit_refusal(facts: Facts) -> str | None:
    """The first limit the conversion is beyond: the wallet's cap, then its client network's of the day."""
    if facts.wallet_slots_used is not None and facts.wallet_slots_used >= facts.wallet_cap:
        return "wallet_cap_reached"
    if facts.network_used is not None and 0 < facts.network_limit <= facts.network_used:
        return "client_network_limit"
    return None
