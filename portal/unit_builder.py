"""What the site page's "Ad units" section shows: the site's units, the builder's fields (a new unit's defaults, a
unit being edited, or the values a form sent back), and the snippet and preview the builder's settings give."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from werkzeug.datastructures import MultiDict

from adnet.accounts.models import Site
from adnet.core.errors import DomainError, NotFound
from adnet.core.inputs import parse
from adnet.delivery import serving
from adnet.delivery.ad_units import SlotSettings, serve_query, settings_of
from adnet.delivery.models import AdUnit
from adnet.delivery.sdk import unit_snippet
from adnet.services import Services
from portal.words import in_words
from web.context import client

# The sizes the builder offers (the API takes any WIDTHxHEIGHT).
SIZES = ("300x250", "336x280", "728x90", "970x250", "468x60", "320x50", "320x100", "160x600", "300x600")


@dataclass(frozen=True)
class Builder:
    """The builder's fields as the form shows them; ``unit_id`` when it edits a unit."""

    unit_id: str | None = None
    name: str = ""
    kinds: list[str] = field(default_factory=lambda: ["BANNER"])
    size: str = "300x250"
    attached_tasks: bool = False
    placement: str = ""
    house_ads: bool = True

    @classmethod
    def of_unit(cls, unit: AdUnit) -> Builder:
        return cls(unit_id=unit.id, name=unit.name, kinds=list(unit.kinds), size=unit.size or "",
                   attached_tasks=unit.attached_tasks, placement=unit.placement, house_ads=unit.house_ads)

    @classmethod
    def of_form(cls, form: MultiDict[str, str], unit_id: str | None = None) -> Builder:
        return cls(unit_id=unit_id, name=form.get("name", ""), kinds=form.getlist("kinds"),
                   size=form.get("size", ""), attached_tasks="attachedTasks" in form,
                   placement=form.get("placement", ""), house_ads=form.get("houseAds") != "off")

    def settings(self) -> SlotSettings:
        """The slot these fields describe; Invalid, naming the field, for fields the API would refuse."""
        return parse(SlotSettings, {"kinds": self.kinds, "size": self.size or None,
                                    "attachedTasks": self.attached_tasks, "placement": self.placement,
                                    "houseAds": self.house_ads})


async def slot_preview(site: Site, slot: SlotSettings, run: Services) -> dict[str, Any]:
    """The snippet of ``slot`` and what serving would show in it now for this browser (None when the site is not
    served: deactivated or deleted)."""
    try:
        preview: serving.Preview | None = await serving.preview(run.serving, serve_query(site.id, slot),
                                                                client())
    except NotFound:
        preview = None
    return {"slot_snippet": unit_snippet(slot), "slot_preview": preview}


async def units_context(site: Site, run: Services, builder: Builder | None = None, *,
                        unit_error: DomainError | None = None, preview_error: DomainError | None = None,
                        **extra: Any) -> dict[str, Any]:
    """The section's context: the site's units, the builder (a new unit's defaults unless given), and its snippet
    and preview (none when its settings were refused)."""
    builder = builder or Builder()
    shown: dict[str, Any] = {}
    if preview_error is None:
        try:
            shown = await slot_preview(site, builder.settings(), run)
        except DomainError as refused:
            preview_error = in_words(refused)
    return {"site": site, "ad_units": await AdUnit.filter(site_id=site.id).order_by("name", "id"),
            "builder": builder, "sizes": SIZES, "unit_snippet": lambda unit: unit_snippet(settings_of(unit)),
            "unit_error": unit_error, "preview_error": preview_error, **shown, **extra}
