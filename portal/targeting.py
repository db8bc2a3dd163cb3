"""What the campaign form's targeting controls show (``templates/portal/advertise/_targeting_fields.html``): the
choices (countries, devices, systems, weekdays, hours, time zones) and which are chosen, from the stored campaign
or, after a refusal, from the form as it was sent. The form posts ``targeting.<rule>`` fields, which
``portal.forms`` reads into the same ``Targeting`` command the API takes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic.alias_generators import to_camel
from werkzeug.datastructures import MultiDict

from adnet.campaigns.audiences import describe
from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import DEVICES, OS_FAMILIES, WEEKDAYS, Targeting, countries, time_zones

DEVICE_LABELS = {device: device.capitalize() for device in DEVICES}
OS_LABELS = dict(zip(OS_FAMILIES, ("Windows", "macOS", "iOS / iPadOS", "Android", "Linux", "ChromeOS"), strict=True))
DAY_LABELS = dict(zip(WEEKDAYS, ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), strict=True))


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
    # The wallet audience rules as the API writes them (JSON text), or as the refused form sent them.
    audience_groups: str = ""
    audience_exclude: str = ""

    def has(self, rule: str, value: Any) -> bool:
        return str(value) in self.chosen.get(rule, [])

    def regions(self, rule: str) -> str:
        """The region codes (``US-CA``) of a geo rule, for its text field; its countries are in the picker."""
        return ", ".join(code for code in self.chosen.get(rule, []) if "-" in code)


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
