"""Monthly statements: what a publisher or an advertiser can file for one UTC calendar month.

A statement reads the ledger (``adnet.money.ledger``) of the accounts its owner holds (a publisher's sites' balances,
in G$ and SOV; an advertiser's unallocated balance, its campaigns' budgets and its tasks' pools) and says, per token:
the opening balance (the sum of every posting before the month), each movement of the month by what it was
(earnings, top-ups, withdrawals, exchanges; deposits, allocations, spend, refunds), and the closing balance, which
is the opening plus the movements, exactly, in integer smallest units. Every posting of the month falls in exactly
one movement (``category_of``; a kind it does not know is ``other``), so nothing is left out of the sum. Beside the
money it lists the month's billed impressions, clicks and paid conversions per site or campaign, and the
withdrawals (with the transaction that redeemed each), deposits and exchanges themselves.

The statement number is derived from the owner and the month (``statement_number``), so it is the same however
often the statement is asked. A month that has not ended is a statement to date (``complete`` is false); a month in
the future, or before the account was opened, is refused (``check_month``): there is nothing to state.

The rules (months, numbers, classification, sums) are pure functions over ledger rows; ``publisher_statement`` and
``advertiser_statement`` load those rows and call them. A statement reads every posting of the owner's accounts up
to the month's end (one per tracking batch that billed it): statements are asked for rarely, and the opening is then
the ledger's own sum rather than a figure kept beside it.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from enum import StrEnum
from typing import Any

from tortoise.expressions import Q

from adnet.accounts.models import Advertiser, Publisher, Site
from adnet.campaigns.budgets import ALLOCATION_KIND, RETURN_KIND
from adnet.campaigns.models import Campaign
from adnet.conversions.models import Conversion
from adnet.conversions.recording import BILLING_KIND as CONVERSION_BILLING_KIND
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.clock import iso
from adnet.core.csv_text import csv_text
from adnet.core.errors import Invalid, NotFound
from adnet.delivery.models import EventType, TrafficDaily
from adnet.money.ledger import AccountKey
from adnet.money.models import (
    Deposit,
    DepositStatus,
    Exchange,
    LedgerAccount,
    LedgerPosting,
    Withdrawal,
)
from adnet.tasks.authoring import TASK_ALLOCATION_KIND
from adnet.tasks.models import Task

_MONTH = re.compile(r"^([0-9]{4})-(0[1-9]|1[0-2])$")
# Ledger accounts that hold what their owner may take out (or spend), and those that hold money set aside.
HOLDER_KINDS = frozenset({"site", "advertiser"})
BUDGET_KINDS = frozenset({"campaign", "task"})


@dataclass(frozen=True, order=True)
class Month:
    """A UTC calendar month."""

    year: int
    month: int

    @classmethod
    def parse(cls, text: object) -> Month:
        """``"2026-11"`` as a month; Invalid ``invalid_month`` for anything else."""
        found = _MONTH.match(text) if isinstance(text, str) else None
        if found is None or int(found.group(1)) < 1970:
            raise Invalid("invalid_month", "month: a month is written YYYY-MM, such as 2026-11.", field="month")
        return cls(int(found.group(1)), int(found.group(2)))

    @classmethod
    def of(cls, moment: datetime) -> Month:
        """The month ``moment`` falls in (UTC; a time without a zone is UTC)."""
        utc = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
        return cls(utc.year, utc.month)

    @property
    def start(self) -> datetime:
        """Its first instant."""
        return datetime(self.year, self.month, 1, tzinfo=UTC)

    @property
    def end(self) -> datetime:
        """The first instant of the next month."""
        return self.next.start

    @property
    def next(self) -> Month:
        """The month after."""
        return Month(self.year + self.month // 12, self.month % 12 + 1)

    @property
    def previous(self) -> Month:
        """The month before."""
        return Month(self.year - (self.month == 1), (self.month - 2) % 12 + 1)

    @property
    def first_day(self) -> date:
        """Its first UTC day."""
        return self.start.date()

    @property
    def last_day(self) -> date:
        """Its last UTC day."""
        return self.end.date() - timedelta(days=1)

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}"


class StatementKind(StrEnum):
    """Whose statement it is: a publisher's (its sites) or an advertiser's."""

    PUBLISHER = "publisher"
    ADVERTISER = "advertiser"


class MovementCategory(StrEnum):
    """What a movement of the month was."""

    EARNINGS = "earnings"  # ad and conversion revenue credited to a site
    DEPOSIT = "deposit"  # a deposit on the vault credited (a publisher's top-up, an advertiser's deposit)
    FUNDING = "funding"  # money adnet itself put in (the demo's budgets)
    WITHDRAWAL = "withdrawal"  # a withdrawal's claim signed
    RELEASED = "withdrawal_released"  # an unredeemed withdrawal's claim expired and its amount came back
    EXCHANGE = "exchange"  # one leg of an exchange between SOV and G$
    ALLOCATION = "allocation"  # unallocated balance moved into a campaign's budget or a task's pool
    SPEND = "spend"  # billed ads and conversions, and rewards, paid from a budget (net of expired rewards)
    REFUND = "refund"  # an ended campaign's or task's unspent budget returned to the unallocated balance
    OTHER = "other"  # any other booking on the owner's accounts


CATEGORY_LABELS = {
    MovementCategory.EARNINGS: "Earnings", MovementCategory.DEPOSIT: "Deposits and top-ups",
    MovementCategory.FUNDING: "Funding by adnet", MovementCategory.WITHDRAWAL: "Withdrawals",
    MovementCategory.RELEASED: "Withdrawals released (claims expired)", MovementCategory.EXCHANGE: "Exchanges",
    MovementCategory.ALLOCATION: "Allocated to budgets", MovementCategory.SPEND: "Spend",
    MovementCategory.REFUND: "Refunds of unspent budgets", MovementCategory.OTHER: "Other",
}
_BILLING_KINDS = frozenset({"ad_billing", CONVERSION_BILLING_KIND})


def category_of(account_kind: str, transaction_kind: str) -> MovementCategory:
    """What a posting on an account of ``account_kind`` by a transaction of ``transaction_kind`` was."""
    on_budget = account_kind in BUDGET_KINDS
    if transaction_kind in _BILLING_KINDS:
        return MovementCategory.SPEND if on_budget else MovementCategory.EARNINGS
    if transaction_kind in ("claim_issue", "claim_redeem"):
        return MovementCategory.SPEND if on_budget else MovementCategory.WITHDRAWAL
    if transaction_kind == "claim_expire":
        return MovementCategory.SPEND if on_budget else MovementCategory.RELEASED
    fixed = {"deposit": MovementCategory.DEPOSIT, "demo_funding": MovementCategory.FUNDING,
             "exchange": MovementCategory.EXCHANGE, ALLOCATION_KIND: MovementCategory.ALLOCATION,
             TASK_ALLOCATION_KIND: MovementCategory.ALLOCATION, RETURN_KIND: MovementCategory.REFUND}
    return fixed.get(transaction_kind, MovementCategory.OTHER)


def statement_number(kind: StatementKind, owner_id: str, month: Month) -> str:
    """The statement's number, ``ST-2026-11-P3F9A1C2B0``: the month, P (publisher) or A (advertiser), and the first
    ten hex digits of SHA-256 of the owner's id; the same every time it is asked."""
    digest = hashlib.sha256(f"{kind.value}:{owner_id}".encode()).hexdigest()[:10].upper()
    return f"ST-{month}-{kind.value[0].upper()}{digest}"


def check_month(month: Month, opened: datetime, now: datetime) -> None:
    """Invalid ``invalid_month`` for a month after the current one or before the account was opened."""
    if month > Month.of(now):
        raise Invalid("invalid_month", f"month: {month} has not begun; statements cover months up to the current "
                                       "one.", field="month", latest=str(Month.of(now)))
    if month < Month.of(opened):
        raise Invalid("invalid_month", f"month: the account was opened in {Month.of(opened)}; there is no statement "
                                       "before that.", field="month", earliest=str(Month.of(opened)))


@dataclass(frozen=True)
class Posting:
    """A ledger posting on one of the owner's accounts: the account, its transaction's kind, the signed amount."""

    account: AccountKey
    kind: str
    amount: int


@dataclass(frozen=True)
class Movement:
    """The month's postings of one category, on one subject (a site, a campaign, or a task without a campaign;
    empty for the unallocated balance), in one token, and part (``balance`` or ``budgets``)."""

    category: MovementCategory
    subject: str
    part: str
    token: Token
    amount: int

    @property
    def label(self) -> str:
        """What the movement was, in words."""
        return CATEGORY_LABELS[self.category]


@dataclass(frozen=True)
class Balance:
    """One part of the owner's money in one token: ``balance`` (a site's claimable, an advertiser's unallocated)
    or ``budgets`` (campaigns' budgets and tasks' pools), with ``closing = opening + movements``."""

    part: str
    token: Token
    opening: int
    movements: int

    @property
    def closing(self) -> int:
        return self.opening + self.movements


def part_of(account: AccountKey) -> str:
    """Which part of the owner's money an account is: ``budgets`` (a campaign's or task's) or ``balance``."""
    return "budgets" if account.kind in BUDGET_KINDS else "balance"


def summarise(opening: Mapping[AccountKey, int], postings: Iterable[Posting], subject_of: Mapping[AccountKey, str],
              parts: Iterable[str] = ("balance",)) -> tuple[list[Balance], list[Movement]]:
    """The balances and movements of a month from the accounts' ``opening`` balances and the month's
    ``postings``: every posting in exactly one movement (summed by category, subject, part and token), and per part
    and token, the opening, the sum of its movements, and so the closing. ``subject_of`` names what each account is
    about (its site or campaign); an account it does not name is about nothing in particular. Each of ``parts`` has
    its G$ balance shown, at zero when it holds nothing."""
    moved: dict[tuple[MovementCategory, str, str, Token], int] = defaultdict(int)
    for posting in postings:
        key = (category_of(posting.account.kind, posting.kind), subject_of.get(posting.account, ""),
               part_of(posting.account), Token(posting.account.token))
        moved[key] += posting.amount
    movements = [Movement(category, subject, part, token, amount)
                 for (category, subject, part, token), amount in sorted(moved.items()) if amount]
    opened: dict[tuple[str, Token], int] = defaultdict(int)
    for account, amount in opening.items():
        opened[(part_of(account), Token(account.token))] += amount
    totals: dict[tuple[str, Token], int] = defaultdict(int)
    for movement in movements:
        totals[(movement.part, movement.token)] += movement.amount
    shown = set(opened) | set(totals) | {(part, Token.GS) for part in parts}
    balances = [Balance(part, token, opened[(part, token)], totals[(part, token)]) for part, token in sorted(shown)]
    return balances, movements


@dataclass(frozen=True)
class Subject:
    """A site or a campaign (or a task without one) on the statement: its billed impressions and clicks, its paid
    conversions, and what it earned or spent in the month (G$)."""

    id: str
    name: str
    impressions: int = 0
    clicks: int = 0
    conversions: int = 0
    amount: int = 0


@dataclass(frozen=True)
class WithdrawalLine:
    """A withdrawal of the month as it stands now; ``tx_hash`` is the transaction that redeemed it, once seen."""

    id: str
    at: datetime
    subject: str
    token: str
    amount: int
    status: str
    tx_hash: str | None


@dataclass(frozen=True)
class DepositLine:
    """A deposit (a top-up) credited in the month, with its transaction."""

    at: datetime
    subject: str
    token: str
    amount: int
    tx_hash: str


@dataclass(frozen=True)
class ExchangeLine:
    """An exchange of the month: ``amount_in`` of ``from_token`` given for ``amount_out`` of ``to_token``."""

    id: str
    at: datetime
    subject: str
    from_token: str
    to_token: str
    amount_in: int
    amount_out: int


@dataclass(frozen=True)
class Statement:
    """A month's statement of one publisher or advertiser (see the module docstring)."""

    number: str
    kind: StatementKind
    owner_id: str
    wallet: str
    month: Month
    complete: bool
    balances: list[Balance]
    movements: list[Movement]
    subjects: list[Subject]
    withdrawals: list[WithdrawalLine] = field(default_factory=list)
    deposits: list[DepositLine] = field(default_factory=list)
    exchanges: list[ExchangeLine] = field(default_factory=list)

    @property
    def totals(self) -> list[Balance]:
        """Per token, both parts together: everything the owner holds in adnet's books."""
        summed: dict[Token, list[int]] = defaultdict(lambda: [0, 0])
        for balance in self.balances:
            summed[balance.token][0] += balance.opening
            summed[balance.token][1] += balance.movements
        return [Balance("total", token, opening, movements) for token, (opening, movements) in sorted(summed.items())]

    def movement_total(self, category: MovementCategory, token: Token = Token.GS) -> int:
        """The sum of the month's movements of ``category`` in ``token``."""
        return sum(movement.amount for movement in self.movements
                   if movement.category == category and movement.token == token)


async def publisher_statement(wallet: str, month: Month, now: datetime) -> Statement:
    """The statement of the publisher account of ``wallet`` (every site it registered, deleted ones included) for
    ``month``. NotFound when the wallet has no publisher account; Invalid ``invalid_month`` (``check_month``)."""
    publisher = await Publisher.get_or_none(wallet=wallet)
    if publisher is None:
        raise NotFound("not_found", "This wallet has no publisher account: register a site first.")
    check_month(month, publisher.created_at, now)
    sites = await Site.filter(publisher_id=publisher.id).order_by("created_at", "id")
    names = {site.id: site.domain for site in sites}
    accounts = await LedgerAccount.filter(kind="site", owner__in=list(names))
    subject_of = {_key(account): account.owner for account in accounts}
    balances, movements = summarise(*await _ledger(accounts, month), subject_of)
    counts = await _traffic("site_id", list(names), month)
    converted = await _conversions("site_id", list(names), month)
    earned = _by_subject(movements, MovementCategory.EARNINGS, 1)
    subjects = [Subject(site_id, domain, *counts.get(site_id, (0, 0)), converted.get(site_id, 0),
                        earned.get(site_id, 0)) for site_id, domain in names.items()]
    return Statement(
        number=statement_number(StatementKind.PUBLISHER, publisher.id, month), kind=StatementKind.PUBLISHER,
        owner_id=publisher.id, wallet=publisher.wallet, month=month, complete=now >= month.end, balances=balances,
        movements=movements, subjects=subjects,
        withdrawals=await _withdrawals({"site_id__in": list(names)}, "site_id", month),
        deposits=await _deposits({"site_id__in": list(names)}, "site_id", month),
        exchanges=[ExchangeLine(exchange.id, exchange.created_at, exchange.site_id, exchange.from_token,
                                exchange.to_token, int(exchange.amount_in), int(exchange.amount_out))
                   for exchange in await Exchange.filter(site_id__in=list(names), **_within(month)).order_by(
                       "created_at", "id")])


async def advertiser_statement(wallet: str, month: Month, now: datetime) -> Statement:
    """The statement of the advertiser account of ``wallet`` for ``month``: its unallocated balance and its
    campaigns' budgets and tasks' pools (a task's pool counts under its campaign). NotFound when the wallet has no
    advertiser account; Invalid ``invalid_month`` (``check_month``)."""
    advertiser = await Advertiser.get_or_none(wallet=wallet)
    if advertiser is None:
        raise NotFound("not_found", "This wallet has no advertiser account: open one in the portal first.")
    check_month(month, advertiser.created_at, now)
    campaigns = dict(await Campaign.filter(advertiser_id=advertiser.id).order_by("created_at", "id").values_list(
        "id", "name"))
    tasks = await Task.filter(advertiser_id=advertiser.id).order_by("created_at", "id").values_list(
        "id", "campaign_id", "title")
    task_subject = {task_id: campaign_id or task_id for task_id, campaign_id, _ in tasks}
    names = {**campaigns, **{task_id: title for task_id, campaign_id, title in tasks if not campaign_id}}
    accounts = await _advertiser_accounts(advertiser.id, list(campaigns), list(task_subject))
    subject_of = {_key(account): task_subject.get(account.owner, account.owner)
                  for account in accounts if account.kind in BUDGET_KINDS}
    balances, movements = summarise(*await _ledger(accounts, month), subject_of, ("balance", "budgets"))
    counts = await _traffic("campaign_id", list(campaigns), month)
    converted = await _conversions("campaign_id", list(campaigns), month)
    spent = _by_subject(movements, MovementCategory.SPEND, -1)
    subjects = [Subject(subject_id, name, *counts.get(subject_id, (0, 0)), converted.get(subject_id, 0),
                        spent.get(subject_id, 0)) for subject_id, name in names.items()]
    return Statement(
        number=statement_number(StatementKind.ADVERTISER, advertiser.id, month), kind=StatementKind.ADVERTISER,
        owner_id=advertiser.id, wallet=advertiser.wallet, month=month, complete=now >= month.end,
        balances=balances, movements=movements, subjects=subjects,
        withdrawals=await _withdrawals({"advertiser_id": advertiser.id}, "advertiser_id", month),
        deposits=await _deposits({"advertiser_id": advertiser.id}, "advertiser_id", month))


@dataclass(frozen=True)
class _Amount:
    """A CSV cell holding a token amount as a decimal string. It is adnet's own number, never text someone wrote, so
    its leading minus is a sign: it is not neutralised as a formula (``csv_text`` neutralises text cells only)."""

    value: int

    def __str__(self) -> str:
        return to_decimal_string(self.value)


CSV_COLUMNS = ["section", "item", "subject", "name", "token", "amount", "impressions", "clicks", "conversions",
               "status", "tx_hash", "at"]


def statement_csv(statement: Statement) -> str:
    """The statement as CSV, one table whose ``section`` column says what each line is: ``statement`` (its number,
    month, owner and wallet), ``balance`` (opening and closing per part and token), ``movement`` (per category and
    subject), ``site`` or ``campaign`` (figures and what it earned or spent), ``withdrawal``, ``deposit`` and
    ``exchange`` lines. Amounts are decimal strings of the token (negative for money out), times ISO 8601 UTC."""
    empty = [""] * len(CSV_COLUMNS)

    def line(**cells: Any) -> list[Any]:
        row = list(empty)
        for name, value in cells.items():
            row[CSV_COLUMNS.index(name)] = value
        return row

    rows = [CSV_COLUMNS,
            line(section="statement", item=statement.number, subject=statement.owner_id, name=statement.wallet,
                 status="complete" if statement.complete else "to date", at=str(statement.month))]
    for balance in [*statement.balances, *statement.totals]:
        rows += [line(section="balance", item=f"{edge} {balance.part}", token=balance.token,
                      amount=_Amount(amount))
                 for edge, amount in (("opening", balance.opening), ("closing", balance.closing))]
    rows += [line(section="movement", item=movement.category.value, subject=movement.subject, name=movement.part,
                  token=movement.token, amount=_Amount(movement.amount))
             for movement in statement.movements]
    subject_section = "site" if statement.kind == StatementKind.PUBLISHER else "campaign"
    rows += [line(section=subject_section, item="earned" if subject_section == "site" else "spent", subject=subject.id,
                  name=subject.name, token=Token.GS, amount=_Amount(subject.amount),
                  impressions=subject.impressions, clicks=subject.clicks, conversions=subject.conversions)
             for subject in statement.subjects]
    rows += [line(section="withdrawal", item=withdrawal.id, subject=withdrawal.subject, token=withdrawal.token,
                  amount=_Amount(-withdrawal.amount), status=withdrawal.status,
                  tx_hash=withdrawal.tx_hash or "", at=iso(withdrawal.at))
             for withdrawal in statement.withdrawals]
    rows += [line(section="deposit", item=deposit.tx_hash, subject=deposit.subject, token=deposit.token,
                  amount=_Amount(deposit.amount), tx_hash=deposit.tx_hash, at=iso(deposit.at))
             for deposit in statement.deposits]
    for exchange in statement.exchanges:
        rows += [line(section="exchange", item=exchange.id, subject=exchange.subject, token=token,
                      amount=_Amount(amount), at=iso(exchange.at))
                 for token, amount in ((exchange.from_token, -exchange.amount_in),
                                       (exchange.to_token, exchange.amount_out))]
    return csv_text(rows)


@dataclass(frozen=True)
class Overview:
    """The dashboard's card: what the publisher's sites earned this month so far, and its latest withdrawal."""

    month: Month
    earned: int
    last_withdrawal: WithdrawalLine | None


async def publisher_overview(wallet: str, now: datetime) -> Overview | None:
    """The month-to-date earnings (G$) and the latest withdrawal of the publisher account of ``wallet``; None when
    it has none."""
    publisher = await Publisher.get_or_none(wallet=wallet)
    if publisher is None:
        return None
    month = Month.of(now)
    site_ids = [str(site_id) for site_id in await Site.filter(publisher_id=publisher.id).values_list(
        "id", flat=True)]
    rows = await LedgerPosting.filter(account__kind="site", account__token=Token.GS, account__owner__in=site_ids,
                                      created_at__gte=month.start).values_list("transaction__kind", "amount")
    earned = sum(int(amount) for kind, amount in rows if category_of("site", kind) == MovementCategory.EARNINGS)
    latest = await Withdrawal.filter(site_id__in=site_ids).order_by("-created_at", "-id").first().select_related(
        "claim")
    return Overview(month, earned, _withdrawal_line(latest, "site_id") if latest is not None else None)


async def _advertiser_accounts(advertiser_id: str, campaign_ids: list[str], task_ids: list[str]) -> list[LedgerAccount]:
    """The advertiser's unallocated balances, its campaigns' budgets and its tasks' pools, and the budgets and pools
    it funded whose campaign or task was deleted since (a draft's: its money came back first, and its postings
    still move the advertiser's money in the months they were booked)."""
    own = await LedgerAccount.filter(kind="advertiser", owner=advertiser_id)
    moves = await LedgerPosting.filter(
        account_id__in=[account.id for account in own],
        transaction__kind__in=[ALLOCATION_KIND, TASK_ALLOCATION_KIND, RETURN_KIND]).values_list(
        "transaction_id", flat=True)
    funded = await LedgerPosting.filter(transaction_id__in=list(moves),
                                        account__kind__in=list(BUDGET_KINDS)).values_list("account_id", flat=True)
    budgets = await LedgerAccount.filter(
        Q(kind="campaign", owner__in=campaign_ids) | Q(kind="task", owner__in=task_ids) | Q(id__in=list(set(funded))))
    return [*own, *budgets]


def _key(account: LedgerAccount) -> AccountKey:
    return AccountKey(account.kind, account.owner, account.token)


async def _ledger(accounts: list[LedgerAccount], month: Month) -> tuple[dict[AccountKey, int], list[Posting]]:
    """The accounts' balances at the start of ``month`` (the sum of their postings before it) and the month's
    postings, with their transactions' kinds."""
    by_id = {account.id: _key(account) for account in accounts}
    opening = dict.fromkeys(by_id.values(), 0)
    if not by_id:
        return opening, []
    for account_id, amount in await LedgerPosting.filter(account_id__in=list(by_id),
                                                         created_at__lt=month.start).values_list(
            "account_id", "amount"):
        opening[by_id[account_id]] += int(amount)
    postings = [Posting(by_id[account_id], kind, int(amount)) for account_id, kind, amount in
                await LedgerPosting.filter(account_id__in=list(by_id), **_within(month)).values_list(
                    "account_id", "transaction__kind", "amount")]
    return opening, postings


def _within(month: Month) -> dict[str, datetime]:
    return {"created_at__gte": month.start, "created_at__lt": month.end}


def _by_subject(movements: list[Movement], category: MovementCategory, sign: int) -> dict[str, int]:
    """The G$ movements of ``category`` per subject, signed so that earnings and spend read positive."""
    totals: dict[str, int] = defaultdict(int)
    for movement in movements:
        if movement.category == category and movement.token == Token.GS:
            totals[movement.subject] += sign * movement.amount
    return totals


async def _traffic(column: str, ids: list[str], month: Month) -> dict[str, tuple[int, int]]:
    """Billed impressions and clicks in ``month`` per site or campaign (``column``)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    if ids:
        for owner, kind, events in await TrafficDaily.filter(
                **{f"{column}__in": ids}, reason="", day__gte=month.first_day, day__lte=month.last_day).values_list(
                column, "type", "events"):
            counts[owner][0 if kind == EventType.IMPRESSION else 1] += events
    return {owner: (impressions, clicks) for owner, (impressions, clicks) in counts.items()}


async def _conversions(column: str, ids: list[str], month: Month) -> dict[str, int]:
    """Paid conversions received in ``month`` per site or campaign (``column``)."""
    counts: dict[str, int] = defaultdict(int)
    if ids:
        for owner in await Conversion.filter(**{f"{column}__in": ids}, paid=True, received_at__gte=month.start,
                                             received_at__lt=month.end).values_list(column, flat=True):
            counts[str(owner)] += 1
    return counts


async def _withdrawals(holder: dict[str, Any], column: str, month: Month) -> list[WithdrawalLine]:
    """The withdrawals made in ``month``, oldest first, as they stand now (a later redeem shows its hash)."""
    found = await Withdrawal.filter(**holder, **_within(month)).order_by("created_at", "id").select_related("claim")
    return [_withdrawal_line(withdrawal, column) for withdrawal in found]


def _withdrawal_line(withdrawal: Withdrawal, column: str) -> WithdrawalLine:
    return WithdrawalLine(withdrawal.id, withdrawal.created_at, str(getattr(withdrawal, column)),
                          withdrawal.token_symbol, int(withdrawal.amount), withdrawal.status.value,
                          withdrawal.claim.redeemed_tx)


async def _deposits(holder: dict[str, Any], column: str, month: Month) -> list[DepositLine]:
    """The deposits credited in ``month``, oldest first."""
    found = await Deposit.filter(**holder, status=DepositStatus.CREDITED, credited_at__gte=month.start,
                                 credited_at__lt=month.end).order_by("credited_at", "id")
    return [DepositLine(deposit.credited_at or deposit.created_at, str(getattr(deposit, column)),
                        deposit.token_symbol, int(deposit.amount), deposit.tx_hash) for deposit in found]
