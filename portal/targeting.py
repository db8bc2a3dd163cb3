"""What the campaign form's targeting controls show (``templates/portal/advertise/_targeting_fields.html``): the
choices (countries, devices, systems, the week grid of days and hours, time zones) and which are chosen, from the
stored campaign or, after a refusal, from the form as it was sent. The form posts ``targeting.<rule>`` fields, which
``portal.forms`` reads into the same ``Targeting`` command the API takes; the week grid posts its cells
(``schedule=mon-9``), which ``written_schedule`` writes as that command's days and hours, or its hours by day."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic.alias_generators import to_camel
from werkzeug.datastructures import MultiDict

from adnet.campaigns.audiences import describe
from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import DEVICES, OS_FAMILIES, WEEKDAYS, Targeting, countries, time_zones
from adnet.core.errors import Invalid

DEVICE_LABELS = {device: device.capitalize() for device in DEVICES}
OS_LABELS = dict(zip(OS_FAMILIES, ("Windows", "macOS", "iOS / iPadOS", "Android", "Linux", "ChromeOS"), strict=True))
DAY_LABELS = dict(zip(WEEKDAYS, ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), strict=True))
# Groups of countries the picker selects at once (``static/portal.js``; without JavaScript, the plain list).
REGION_SHORTCUTS = {
    "EU": ("AT", "BE", "BG", "HR", "CY", "CZ", "DK", "EE", "FI", "FR", "DE", "GR", "HU", "IE", "IT", "LV", "LT", "LU",
           "MT", "NL", "PL", "PT", "RO", "SK", "SI", "ES", "SE"),
    "DACH": ("DE", "AT", "CH"),
    "Nordics": ("DK", "FI", "IS", "NO", "SE"),
    "North America": ("US", "CA", "MX"),
    "Latin America": ("AR", "BO", "BR", "CL", "CO", "CR", "CU", "DO", "EC", "GT", "HN", "MX", "NI", "PA", "PE", "PY",
                      "SV", "UY", "VE"),
    "Southeast Asia": ("BN", "KH", "ID", "LA", "MY", "MM", "PH", "SG", "TH", "TL", "VN"),
    "Africa": ("DZ", "AO", "BJ", "BW", "BF", "BI", "CM", "CV", "CF", "TD", "KM", "CG", "CD", "CI", "DJ", "EG", "GQ",
               "ER", "SZ", "ET", "GA", "GM", "GH", "GN", "GW", "KE", "LS", "LR", "LY", "MG", "MW", "ML", "MR", "MU",
               "MA", "MZ", "NA", "NE", "NG", "RW", "ST", "SN", "SC", "SL", "SO", "ZA", "SS", "SD", "TZ", "TG", "TN",
               "UG", "ZM", "ZW"),
}
DAY_NAMES = dict(zip(WEEKDAYS, ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
                     strict=True))
# The week grid's cells: one field of this name per chosen hour of a day, ``mon-9`` (09:00 to 10:00 on Mondays).
SCHEDULE = "schedule"
_CELL = re.compile(r"^(mon|tue|wed|thu|fri|sat|sun)-(\d{1,2})$")
Slot = tuple[str, int]


@dataclass(frozen=True)
class TargetingForm:
    """The targeting controls of one campaign form: what can be chosen, and what is."""

    chosen: dict[str, list[str]] = field(default_factory=dict)
    time_zone: str = "UTC"
    countries: list[tuple[str, str]] = field(default_factory=countries)
    time_zones: list[str] = field(default_factory=time_zones)
    devices: dict[str, str] = field(default_factory=lambda: dict(DEVICE_LABELS))
    systems: dict[str, str] = field(default_factory=lambda: dict(OS_LABELS))
    days: dict[str, str] = field(default_factory=lambda: dict(DAY_LABELS))
    day_names: dict[str, str] = field(default_factory=lambda: dict(DAY_NAMES))
    hours: range = range(24)
    regions_shortcuts: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(REGION_SHORTCUTS))
    # The week grid's chosen cells (``mon-9``); none for a campaign that runs at any hour of any day.
    slots: frozenset[str] = frozenset()
    # The wallet audience rules as the API writes them (JSON text), or as the refused form sent them.
    audience_groups: str = ""
    audience_exclude: str = ""

    def has(self, rule: str, value: Any) -> bool:
        return str(value) in self.chosen.get(rule, [])

    def runs(self, day: str, hour: int) -> bool:
        """Whether the week grid's cell of ``day`` at ``hour`` is chosen."""
        return f"{day}-{hour}" in self.slots

    def regions(self, rule: str) -> str:
        """The region codes (``US-CA``) of a geo rule, for its text field; its countries are in the picker."""
        return ", ".join(code for code in self.chosen.get(rule, []) if "-" in code)


def schedule_of(slots: Collection[Slot]) -> dict[str, Any]:
    """The ``Targeting`` schedule rules (``days``, ``hours``, ``weekHours``) that run a campaign in exactly the week
    grid's cells ``slots`` (day, hour): none for no cell or every cell (no limit); days and hours when the cells are
    the same hours on each chosen day (the rules the API has always taken, and that read best); otherwise the
    hours of each day."""
    chosen = set(slots)
    if not chosen or len(chosen) == len(WEEKDAYS) * 24:
        return {"days": [], "hours": [], "weekHours": {}}
    days = [day for day in WEEKDAYS if any(slot[0] == day for slot in chosen)]
    hours = sorted({hour for _, hour in chosen})
    if len(chosen) == len(days) * len(hours):
        return {"days": days if len(days) < len(WEEKDAYS) else [], "hours": hours if len(hours) < 24 else [],
                "weekHours": {}}
    return {"days": [], "hours": [],
            "weekHours": {day: sorted(hour for slot_day, hour in chosen if slot_day == day) for day in days}}


def slots_of(targeting: Targeting) -> frozenset[Slot]:
    """The week grid's cells (day, hour) in which ``targeting``'s schedule runs a campaign; none when it has no
    schedule (it runs at any hour of any day)."""
    if not (targeting.days or targeting.hours or targeting.week_hours):
        return frozenset()
    by_day: dict[str, list[int]] = {str(day): hours for day, hours in targeting.week_hours.items()}
    return frozenset((day, hour) for day in WEEKDAYS for hour in range(24)
                     if (not targeting.days or day in targeting.days)
                     and (not targeting.hours or hour in targeting.hours)
                     and (not by_day or hour in by_day.get(day, [])))


def written_schedule(form: MultiDict[str, str]) -> MultiDict[str, str]:
    """The form with its week grid's cells written as the schedule rules the command takes (``schedule_of``);
    Invalid, naming the grid, for a cell that is not a day and an hour. A form without the grid is left as is."""
    if SCHEDULE not in form:
        return form
    slots: set[Slot] = set()
    for cell in form.getlist(SCHEDULE):
        found = _CELL.match(cell.strip())
        if not found or int(found.group(2)) > 23:
            raise Invalid("invalid_field", f"{SCHEDULE}: a day and an hour of the week grid, such as mon-9",
                          field=SCHEDULE)
        slots.add((found.group(1), int(found.group(2))))
    rules = schedule_of(slots)
    written = MultiDict([(name, value) for name, value in form.items(multi=True) if name != SCHEDULE])
    written.setlist("targeting.days", rules["days"])
    written.setlist("targeting.hours", [" ".join(str(hour) for hour in rules["hours"])])
    written.setlist("targeting.weekHours", [json.dumps(rules["weekHours"])])
    return written


def targeting_form(campaign: Campaign | None, values: Mapping[str, str] | None, refused: bool) -> TargetingForm:
    """The controls for ``campaign``'s targeting, or for the form ``values`` sent when it was ``refused`` (or for
    a new campaign)."""
    if campaign is not None and not refused:
        targeting = Targeting.model_validate(campaign.targeting or {})
        stored, written = targeting.stored(), targeting.model_dump(mode="json")
        return TargetingForm(chosen={to_camel(name): [str(item) for item in value]
                                     for name, value in stored.items() if isinstance(value, list)},
                             time_zone=stored["time_zone"],
                             slots=frozenset(f"{day}-{hour}" for day, hour in slots_of(targeting)),
                             audience_groups=_json_text(written["audienceGroups"]),
                             audience_exclude=_json_text(written["audienceExclude"]))
    sent = values if isinstance(values, MultiDict) else MultiDict(values or {})
    chosen: dict[str, list[str]] = {}
    for name, value in sent.items(multi=True):
        if name.startswith("targeting.") and name not in _AUDIENCE_FIELDS and name != "targeting.weekHours":
            chosen.setdefault(name.removeprefix("targeting."), []).extend(
                item.strip().upper() if "geo" in name else item.strip() for item in value.replace(",", " ").split())
    return TargetingForm(chosen=chosen, time_zone=sent.get("targeting.timeZone") or "UTC",
                         slots=frozenset(cell.strip() for cell in sent.getlist(SCHEDULE)),
                         audience_groups=sent.get("targeting.audienceGroups") or "",
                         audience_exclude=sent.get("targeting.audienceExclude") or "")


_AUDIENCE_FIELDS = ("targeting.audienceGroups", "targeting.audienceExclude")


def audience_summary(stored: Mapping[str, Any] | None) -> list[str]:
    """A campaign's wallet audience in words, for the summary an operator reviews: its groups (any of them), each
    the rules it needs (all of them), then its exclusions."""
    targeting = Targeting.model_validate(stored or {})
    parts = []
    if targeting.audience_groups:
        parts.append("a wallet that " + " or ".join(
            " and ".join(describe(rule) for rule in group) for group in targeting.audience_groups))
    if targeting.audience_exclude:
        parts.append("never a wallet that " + " or ".join(describe(rule) for rule in targeting.audience_exclude))
    return parts


def week_hours_summary(stored: Mapping[str, Any] | None) -> str:
    """A campaign's hours by day in words, Monday first (``tue 9, 10 · sat 20``), whatever order the database keeps
    the days in (PostgreSQL's JSONB sorts an object's keys); empty without hours by day."""
    week_hours = (stored or {}).get("week_hours") or {}
    return " · ".join(f"{day} {', '.join(str(hour) for hour in week_hours[day])}"
                      for day in WEEKDAYS if week_hours.get(day))


def _json_text(rules: list[Any]) -> str:
    """Rules as the form's text shows them: JSON, empty for none."""
    return json.dumps(rules) if rules else ""
