"""What the campaign form's targeting controls show (``templates/portal/advertise/_targeting_fields.html``): the
choices (countries, devices, systems, weekdays, hours, time zones) and which are chosen, from the stored campaign
or, after a refusal, from the form as it was sent. The form posts ``targeting.<rule>`` fields, which
``portal.forms`` reads into the same ``Targeting`` command the API takes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
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
HOURS = "targeting.hours"
# An hour (9) or a range of hours from its first to its end (9-17: 09:00 to 17:00, the hours 9 to 16; 22-2 runs
# past midnight).
_HOUR_RANGE = re.compile(r"^(\d{1,2})(?:[-\u2013](\d{1,2}))?$")


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
    hours: range = range(24)
    regions_shortcuts: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(REGION_SHORTCUTS))
    # The hours field as it was sent, shown again after a refusal.
    hours_text: str | None = None
    # The wallet audience rules as the API writes them (JSON text), or as the refused form sent them.
    audience_groups: str = ""
    audience_exclude: str = ""

    def has(self, rule: str, value: Any) -> bool:
        return str(value) in self.chosen.get(rule, [])

    @property
    def hour_ranges(self) -> str:
        """The chosen hours as the ranges a person types (``9-12, 18-19``), or as they were sent."""
        if self.hours_text is not None:
            return self.hours_text
        hours = sorted({int(hour) for hour in self.chosen.get("hours", []) if hour.isdigit()})
        ranges: list[list[int]] = []
        for hour in hours:
            if ranges and ranges[-1][1] == hour:
                ranges[-1][1] = hour + 1
            else:
                ranges.append([hour, hour + 1])
        return ", ".join(f"{first}-{end}" for first, end in ranges)

    def regions(self, rule: str) -> str:
        """The region codes (``US-CA``) of a geo rule, for its text field; its countries are in the picker."""
        return ", ".join(code for code in self.chosen.get(rule, []) if "-" in code)


def written_hours(form: MultiDict[str, str]) -> MultiDict[str, str]:
    """The form with its hours field's ranges (``9-17, 22-2``) written as the hours the command takes; Invalid,
    naming the field, for a text that is not ranges of hours."""
    if HOURS not in form:
        return form
    hours: list[int] = []
    for text in form.getlist(HOURS):
        for part in filter(None, re.split(r"[\s,;]+", text.strip())):
            found = _HOUR_RANGE.match(part)
            first = int(found.group(1)) if found else -1
            end = int(found.group(2) or first + 1) if found else -1
            if not (0 <= first <= 23 and 0 <= end <= 24 and end != first):
                raise Invalid("invalid_field", f"{HOURS}: ranges of hours such as 9-17, 20-22 (from 0 to 24)",
                              field=HOURS)
            hours += [hour % 24 for hour in range(first, end if end > first else end + 24)]
    written = MultiDict([(name, value) for name, value in form.items(multi=True) if name != HOURS])
    written.setlist(HOURS, [" ".join(str(hour) for hour in dict.fromkeys(hours))])
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
                             audience_groups=_json_text(written["audienceGroups"]),
                             audience_exclude=_json_text(written["audienceExclude"]))
    sent = values if isinstance(values, MultiDict) else MultiDict(values or {})
    chosen: dict[str, list[str]] = {}
    for name, value in sent.items(multi=True):
        if name.startswith("targeting.") and name not in _AUDIENCE_FIELDS:
            chosen.setdefault(name.removeprefix("targeting."), []).extend(
                item.strip().upper() if "geo" in name else item.strip() for item in value.replace(",", " ").split())
    return TargetingForm(chosen=chosen, time_zone=sent.get("targeting.timeZone") or "UTC",
                         hours_text=" ".join(sent.getlist(HOURS)) if HOURS in sent else None,
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


def _json_text(rules: list[Any]) -> str:
    """Rules as the form's text shows them: JSON, empty for none."""
    return json.dumps(rules) if rules else ""
