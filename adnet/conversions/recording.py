"""Recording a conversion the advertiser's server reports, attributing it to its click and paying for it: exactly
once per campaign and order id, also under concurrent posts of the same order, from any number of processes.

The transaction: load the facts (the click the click id names, with its site's and campaign's facts for the rule of
where a campaign may be paid, ``adnet.campaigns.eligibility``; the proven wallet's attributed conversions of the
goal; for a priced goal, the campaign's spend of the day, locked as tracking locks it, and its remaining budget),
decide (``adnet.conversions.attribution.decide``, pure), then write: the conversion row, and for a paid one a
balanced ledger transaction (kind ``conversion_billing``, referenced by the conversion's id: the campaign pays the
CPA, the click's site earns the publisher's share, the platform the rest) and the CPA added to the day's spend, so
serving and tracking see it against the daily cap. The advertiser's webhooks hear ``conversion.recorded`` from the
same transaction.

The database decides what must be exact: the unique key on (campaign, order id) makes a repeated order fail its
insert, which answers with the conversion first recorded; the unique key on (goal, wallet, slot) keeps a wallet
within the goal's cap; the ledger refuses a debit the campaign's account cannot cover and a second booking of the
same conversion. A transaction that lost a race (a wallet slot, the budget moved, a busy database) is decided again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Literal

from tortoise.exceptions import IntegrityError, OperationalError
from tortoise.transactions import in_transaction

from adnet.campaigns.campaigns import REVIEWED
from adnet.campaigns.eligibility import FACT_COLUMNS, facts_of, refusal
from adnet.campaigns.goals import owned_goal
from adnet.campaigns.models import Campaign, CampaignStatus, ConversionGoal, GoalKind
from adnet.config import Settings
from adnet.conversions.attribution import Click, Facts, Outcome, attribution_refusal, decide
from adnet.conversions.clicks import ClickClaims, ClickIdError, verify_click_id
from adnet.conversions.commands import ConversionReport, PublicConversion
from adnet.conversions.models import Conversion
from adnet.conversions.views import view_claims
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict, Forbidden, Invalid, NotFound
from adnet.core.ids import new_id
from adnet.db import sql
from adnet.delivery.caps import WindowKey, add_to_windows, day_start, lock_windows, spend_window
from adnet.delivery.models import EventType, TrackingEvent
from adnet.money import ledger
from adnet.webhooks import outbox
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)

BILLING_KIND = "conversion_billing"
# What a conversion's claims name: a click (its click id, or a wallet's click binding) or an impression (a wallet's
# view binding: view-through).
Via = Literal["click", "view"]
# A conversion reported a little in the future is tolerated (the advertiser's clock a hair ahead); more is refused.
FUTURE_SKEW = timedelta(minutes=5)
_ATTEMPTS = 5
_RECEIVED_AT = TrackingEvent._meta.fields_map["received_at"]
_CLICK = (f"SELECT tracking_event.received_at AS clicked_at, tracking_event.billable AS billable, "  # noqa: S608
          f"tracking_event.site_id AS click_site_id, tracking_event.creative_id AS creative_id, "
          f"tracking_event.client_network AS client_network, tracking_event.placement AS click_placement, "
          f"tracking_event.country AS click_country, tracking_event.device AS click_device, {FACT_COLUMNS} "
          "FROM tracking_event JOIN campaign ON campaign.id = tracking_event.campaign_id "
          "LEFT JOIN site ON site.id = tracking_event.site_id "
          "WHERE tracking_event.id = :event_id AND tracking_event.campaign_id = :campaign_id "
          "AND tracking_event.type = :type")


@dataclass(frozen=True)
class Recorded:
    """The conversion of the order, and whether this report recorded it (False: it was recorded before)."""

    conversion: Conversion
    created: bool


@dataclass(frozen=True)
class Terms:
    """What recording reads from the settings: the tracking secrets click ids are signed with (current first), the
    publishers' share, the attributed conversions a goal takes per client network and UTC day (0: no limit), and
    whether the database is SQLite, whose transactions exclude every other writer."""

    secrets: tuple[str, ...]
    share_bps: int
    network_limit: int
    single_writer: bool

    @classmethod
    def of(cls, settings: Settings) -> Terms:
        return cls(secrets=(settings.tracking_secret, settings.tracking_secret_previous or ""),
                   share_bps=settings.publisher_share_bps, network_limit=settings.conversion_network_limit,
                   single_writer=settings.database_url.startswith("sqlite"))


async def record_conversion(wallet: str, report: ConversionReport, terms: Terms, now: datetime) -> Recorded:
    """Record the conversion ``report`` names for a goal of a campaign the wallet manages, attributed and paid as
    the rules decide; an order already recorded answers that conversion. NotFound / Forbidden for a goal the wallet
    may not report on, Conflict ``goal_not_reviewed`` before its campaign was approved, Invalid for a conversion
    said to happen in the future."""
    goal = await owned_goal(wallet, report.goal_id)
    return await _record_reported(goal, report, terms, now)


async def record_public(report: PublicConversion, terms: Terms, now: datetime) -> Recorded:
    """Record the conversion a page reports for a goal marked ``public`` (the pixel or beacon), with no key: by
    the same rules, order ids and payment as a conversion the advertiser's server reports, happening when received
    and without a wallet. NotFound for no such goal, Forbidden ``goal_not_public`` for a goal not marked public,
    and the refusals of ``record_conversion``."""
    goal = await ConversionGoal.get_or_none(id=report.goal_id).select_related("campaign__advertiser")
    if goal is None:
        raise NotFound.of("goal")
    if not goal.public:
        raise Forbidden("goal_not_public", "Only a goal marked public may be reported without an API key.")
    return await _record_reported(goal, ConversionReport.model_construct(**dict(report), occurred_at=None,
                                                                         wallet=None), terms, now)


async def _record_reported(goal: ConversionGoal, report: ConversionReport, terms: Terms, now: datetime) -> Recorded:
    """Record a reported conversion of ``goal`` (its campaign loaded with its advertiser), whoever reported it."""
    if goal.kind == GoalKind.ONCHAIN:
        raise Conflict("goal_onchain", "An onchain goal's conversions are read from the chain, not reported.")
    if goal.campaign.status not in (*REVIEWED, CampaignStatus.ENDED):
        raise Conflict("goal_not_reviewed", "Conversions count once the goal's campaign is approved.",
                       currentStatus=goal.campaign.status.value)
    occurred_at = report.occurred_at.astimezone(UTC) if report.occurred_at is not None else now
    if occurred_at > now + FUTURE_SKEW:
        raise Invalid("invalid_field", "occurredAt: may not be in the future", field="occurredAt")
    if report.click_id is None:  # a proven wallet's conversion without a click: a view's, or unbound
        view = await view_claims(goal, str(report.wallet), occurred_at)
        return await _record(goal, Reported(report.order_id, report.wallet, report.value, "view"), view,
                             None if view is not None else "wallet_unbound", occurred_at, terms, now)
    claims, click_reason = _claims(report.click_id, goal.campaign.id, terms.secrets, now)
    return await _record(goal, Reported(report.order_id, report.wallet, report.value), claims, click_reason,
                         occurred_at, terms, now)


async def record_onchain(goal: ConversionGoal, claims: ClickClaims | None, *, order_id: str, wallet: str | None,
                         occurred_at: datetime, terms: Terms, now: datetime, via: Via = "click") -> Recorded:
    """Record the conversion an on-chain goal's event makes (``adnet.conversions.onchain``): ``order_id`` names the
    log, ``wallet`` is the event's, proven for the click ``claims`` names (a binding), or with ``via`` ``view`` for
    the impression it names (a view binding: the event id is the impression's, ``issued_at`` when it was seen), and
    ``occurred_at`` is its block's time; without ``claims`` (and without its wallet) the event's wallet was proven
    for no click or view of the campaign, which records it as ``wallet_unbound``. The same rules, booking and unique
    keys as a reported conversion (a view's window is the goal's view window); the goal's campaign loaded with its
    advertiser."""
    return await _record(goal, Reported(order_id, wallet, None, via), claims,
                         "wallet_unbound" if claims is None else None, occurred_at, terms, now)


@dataclass(frozen=True)
class Reported:
    """What a conversion says besides its click: its order id, the proven wallet, the order's value, and whether
    its claims name a click or (view-through) an impression."""

    order_id: str
    wallet: str | None
    value: int | None
    via: Via = "click"


async def _record(goal: ConversionGoal, reported: Reported, claims: ClickClaims | None, click_reason: str | None,
                  occurred_at: datetime, terms: Terms, now: datetime) -> Recorded:
    """Write the conversion in a transaction, again when it lost a race; the first conversion of the order when
    it was recorded before."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            async with in_transaction():
                conversion = await _write(goal, reported, claims, click_reason, occurred_at, terms, now)
            return Recorded(conversion, created=True)
        except IntegrityError:
            first = await Conversion.get_or_none(campaign_id=goal.campaign.id, order_id=reported.order_id)
            if first is not None:
                return Recorded(first, created=False)
        except (ledger.InsufficientFunds, OperationalError):
            pass
        log.info("conversion retried attempt=%d goal=%s", attempt, goal.id)
        await asyncio.sleep(0.005 * attempt)
    raise Conflict("conversion_contended", "Other conversions of this campaign are being recorded; retry.")


def _claims(click_id: str, campaign_id: str, secrets: Sequence[str], now: datetime
            ) -> tuple[ClickClaims | None, str | None]:
    """The click id's claims when it verifies and names the goal's campaign, else the reason it does not."""
    try:
        claims = verify_click_id(click_id, secrets=secrets, now=now)
    except ClickIdError as error:
        return None, error.reason
    if claims.campaign_id != campaign_id:
        return None, "click_invalid"
    return claims, None


async def _write(goal: ConversionGoal, report: Reported, claims: ClickClaims | None,
                 click_reason: str | None, occurred_at: datetime, terms: Terms, now: datetime) -> Conversion:
    """Load, decide and write one conversion inside the caller's transaction."""
    campaign = goal.campaign
    touched = await _touched(claims, campaign.id, report.via) if claims is not None else None
    if claims is not None and touched is None:
        click_reason = "click_invalid"  # a genuine id of a click no longer (or never) recorded
    slots_used = None
    if report.wallet is not None:
        slots_used = await Conversion.filter(goal_id=goal.id, wallet=report.wallet,
                                             wallet_slot__not_isnull=True).count()
    window = timedelta(hours=goal.view_window_hours) if report.via == "view" else timedelta(
        days=goal.click_window_days)
    facts = Facts(occurred_at=occurred_at, window=window, click=touched.click if touched else None,
                  click_reason=click_reason, site_refusal=touched.site_refusal if touched else None,
                  wallet_cap=goal.wallet_cap, wallet_slots_used=slots_used, cpa=int(goal.cpa))
    network = network_window(goal.id, touched.network, now) if touched and terms.network_limit else None
    facts, spend = await _lock_limits(facts, campaign, network, terms, now)
    outcome = decide(facts, terms.share_bps)
    conversion = await Conversion.create(
        id=new_id("cv"), campaign_id=campaign.id, goal=goal, order_id=report.order_id,
        **_touch_columns(touched, report.via), wallet=report.wallet,
        wallet_slot=slots_used + 1 if outcome.attributed and slots_used is not None else None,
        value=None if report.value is None else Decimal(report.value),
        occurred_at=occurred_at, received_at=now,
        attributed=outcome.attributed, paid=outcome.paid, reason=outcome.reason, cost=Decimal(outcome.cost),
        publisher_amount=Decimal(outcome.publisher_amount))
    if outcome.paid:
        await _pay(conversion, outcome, spend, now)
    if outcome.attributed and network is not None:
        await sql.run(add_to_windows({network: 1}))
    await outbox.record(campaign.advertiser.wallet, WebhookEventType.CONVERSION_RECORDED,
                        conversion_payload(conversion), now)
    log.info("conversion recorded conversion=%s campaign=%s goal=%s attributed=%d paid=%d reason=%s",
             conversion.id, campaign.id, goal.id, outcome.attributed, outcome.paid, outcome.reason or "-")
    return conversion


@dataclass(frozen=True)
class _Touched:
    """The recorded click (or, for a view, impression) a conversion names: its event, site, creative and client
    network, its placement, country and device (which reports break conversions down by), what the rules read of
    it, and whether the campaign may pay on its site now."""

    event_id: str
    site_id: str
    creative_id: str
    network: str
    placement: str
    country: str
    device: str
    click: Click
    site_refusal: str | None


def _touch_columns(touched: _Touched | None, via: Via) -> dict[str, Any]:
    """The columns of a conversion that name its click (or impression): all null when it names none."""
    if touched is None:
        return {"click_event_id": None, "attributed_via": None, "site_id": None, "creative_id": None,
                "clicked_at": None, "placement": "", "country": "", "device": ""}
    return {"click_event_id": touched.event_id, "attributed_via": via, "site_id": touched.site_id,
            "creative_id": touched.creative_id, "clicked_at": touched.click.clicked_at,
            "placement": touched.placement, "country": touched.country, "device": touched.device}


async def _touched(claims: ClickClaims, campaign_id: str, via: Via) -> _Touched | None:
    """The recorded click (or, for a view, impression) ``claims`` names, None when none is recorded."""
    kind = EventType.IMPRESSION if via == "view" else EventType.CLICK
    rows = await sql.fetch(_CLICK, event_id=claims.event_id, campaign_id=campaign_id, type=kind.value)
    if not rows:
        return None
    row = rows[0]
    site, terms_of_site = facts_of(row)
    return _Touched(event_id=claims.event_id, site_id=row["click_site_id"], creative_id=row["creative_id"],
                    network=row["client_network"], placement=row["click_placement"] or "",
                    country=row["click_country"] or "", device=row["click_device"] or "",
                    site_refusal=refusal(site, terms_of_site, paid=True),
                    click=Click(clicked_at=_RECEIVED_AT.to_python_value(row["clicked_at"]).astimezone(UTC),
                                billable=bool(row["billable"])))


async def _lock_limits(facts: Facts, campaign: Campaign, network: WindowKey | None, terms: Terms,
                       now: datetime) -> tuple[Facts, WindowKey]:
    """Lock and read the windows the decision depends on: the client network's conversions of the day (when
    counted), then, for a priced conversion nothing else refuses, the campaign's spend of the day with its
    remaining budget. Every conversion locks in that order, so no two wait on each other. Returns the facts with
    them, and the spend window."""
    if network is not None:
        used = await sql.run(lock_windows({network}, single_writer=terms.single_writer))
        facts = replace(facts, network_limit=terms.network_limit, network_used=used[network])
    spend = spend_window(campaign.id, now)
    if facts.cpa > 0 and attribution_refusal(facts) is None:
        used = await sql.run(lock_windows({spend}, single_writer=terms.single_writer))
        facts = replace(facts, remaining=await ledger.balance(ledger.campaign(campaign.id)),
                        daily_cap=None if campaign.daily_cap is None else int(campaign.daily_cap),
                        spent_today=used[spend])
    return facts, spend


def network_window(goal_id: str, network: str, moment: datetime) -> WindowKey:
    """The window counting a goal's attributed conversions whose clicks came from ``network`` on the UTC day of
    ``moment`` (a billing window, ``adnet.delivery.caps``, locked as tracking locks its caps)."""
    return f"conversions:{goal_id}:{network}", day_start(moment)


async def _pay(conversion: Conversion, outcome: Outcome, spend: tuple[str, datetime], now: datetime) -> None:
    """Book the paid conversion and add its cost to the campaign's spend of the day (its window is locked)."""
    site_id = str(conversion.site_id)
    legs = [(ledger.campaign(conversion.campaign_id), -outcome.cost),
            (ledger.site(site_id), outcome.publisher_amount),
            (ledger.platform(), outcome.cost - outcome.publisher_amount)]
    await ledger.book(BILLING_KIND, conversion.id, [(account, amount) for account, amount in legs if amount],
                      now=now, memo=f"conversion {conversion.order_id[:64]}")
    await sql.run(add_to_windows({spend: outcome.cost}))


def conversion_payload(conversion: Conversion) -> dict[str, Any]:
    """A conversion as its advertiser reads it (the webhook's ``data``, the API's answer): amounts as G$ decimal
    strings, times as ISO 8601 UTC."""
    return {
        "conversionId": conversion.id, "campaignId": conversion.campaign_id,
        "goalId": conversion.goal_id,
        "orderId": conversion.order_id, "siteId": conversion.site_id, "via": conversion.attributed_via,
        "attributed": conversion.attributed,
        "paid": conversion.paid, "reason": conversion.reason, "cost": to_decimal_string(int(conversion.cost)),
        "value": None if conversion.value is None else to_decimal_string(int(conversion.value)),
        "occurredAt": _iso(conversion.occurred_at), "clickedAt": _iso(conversion.clicked_at) if conversion.clicked_at
        else None, "receivedAt": _iso(conversion.received_at),
    }


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")

