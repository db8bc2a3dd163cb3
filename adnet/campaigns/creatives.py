"""A campaign's creatives (the spec's ``ad``): banners with their landing page, size and media type.

Editing a creative of a reviewed campaign (approved or paused) sends that creative alone back to review, so the
campaign's other creatives keep serving and the edited one serves only after an operator approves it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from adnet.campaigns.campaigns import _size, owned_campaign
from adnet.campaigns.models import Campaign, CampaignStatus, Creative, CreativeStatus, MediaType
from adnet.core import changes
from adnet.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from adnet.core.ids import has_prefix, new_id

log = logging.getLogger(__name__)

MAX_URL = 2048
MAX_DESCRIPTION = 500
CREATIVE_FIELDS = {
    "bannerUrl": "banner_url", "targetUrl": "target_url", "description": "description", "mediaType": "media_type",
    "size": "size",
}


def parse_creative(raw: Mapping[str, Any], *, partial: bool) -> dict[str, Any]:
    """Creative fields from API names to model values: http(s) URLs without credentials, a description, the
    media type (image or video) and a size ``WxH``; Invalid, naming the field."""
    unknown = sorted(set(raw) - set(CREATIVE_FIELDS))
    if unknown:
        raise Invalid("invalid_field", f"{unknown[0]}: not a creative field", field=unknown[0])
    if not partial:
        for name in ("bannerUrl", "targetUrl", "size"):
            if raw.get(name) is None:
                raise Invalid("missing_field", f"{name}: this field is required", field=name)
    values: dict[str, Any] = {}
    for name, value in raw.items():
        if name in ("bannerUrl", "targetUrl"):
            values[CREATIVE_FIELDS[name]] = web_url(value, name)
        elif name == "description":
            if not isinstance(value, str) or len(value) > MAX_DESCRIPTION:
                raise Invalid("invalid_field", f"description: at most {MAX_DESCRIPTION} characters", field=name)
            values["description"] = value.strip()
        elif name == "mediaType":
            if value not in {item.value for item in MediaType}:
                raise Invalid("invalid_field", "mediaType: image or video", field=name)
            values["media_type"] = MediaType(value)
        else:
            values["width"], values["height"], _ = _size(value, name)
    return values


def web_url(value: Any, field: str) -> str:
    """An absolute http or https URL with a host and no credentials (``https://good@evil`` misleads), without
    spaces or control characters; Invalid ``invalid_url`` otherwise."""
    if not isinstance(value, str) or not value or len(value) > MAX_URL or any(
            char.isspace() or ord(char) < 32 or ord(char) == 127 for char in value):
        raise _invalid_url(field)
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        raise _invalid_url(field) from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc or not port_ok:
        raise _invalid_url(field)
    return value


def _invalid_url(field: str) -> DomainError:
    return Invalid("invalid_url", f"{field}: an absolute http:// or https:// URL with a host", field=field)


async def add_creative(wallet: str, campaign_id: str, raw: Mapping[str, Any], now: datetime) -> Creative:
    """A new creative of the wallet's campaign, in review: with the campaign when it has not been reviewed yet, or
    on its own (the rest keeps serving) when the campaign is approved or paused. Conflict ``campaign_locked`` while the
    campaign is in review or ended."""
    campaign = await owned_campaign(wallet, campaign_id)
    values = parse_creative(raw, partial=False)
    _check_creatives_editable(campaign)
    creative = await Creative.create(id=new_id("ad"), campaign=campaign, status=CreativeStatus.REVIEW,
                                     created_at=now, updated_at=now, **values)
    log.info("creative added creative=%s campaign=%s", creative.id, campaign.id)
    return creative


async def edit_creative(wallet: str, creative_id: Any, raw: Mapping[str, Any], now: datetime) -> Creative:
    """Change a creative of the wallet's campaign; it goes back to review (and stops serving until approved),
    while the campaign's other creatives keep serving."""
    creative = await owned_creative(wallet, creative_id)
    values = parse_creative(raw, partial=True)
    _check_creatives_editable(creative.campaign)
    await Creative.filter(id=creative.id).update(status=CreativeStatus.REVIEW, rejection_reason="", updated_at=now,
                                                 **values)
    await creative.refresh_from_db()
    changes.announce()
    log.info("creative edited creative=%s campaign=%s back_to_review=1", creative.id, creative.campaign.id)
    return creative


async def owned_creative(wallet: str, creative_id: Any) -> Creative:
    """The creative ``creative_id`` (with its campaign) when ``wallet`` owns its campaign: NotFound / Forbidden."""
    if not isinstance(creative_id, str) or not has_prefix(creative_id, "ad"):
        raise NotFound.of("ad")
    creative = await Creative.get_or_none(id=creative_id).select_related("campaign__advertiser")
    if creative is None:
        raise NotFound.of("ad")
    if creative.campaign.advertiser.wallet != wallet:
        raise Forbidden("not_owner", "This creative belongs to another wallet.", field="adId")
    return creative


def _check_creatives_editable(campaign: Campaign) -> None:
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise Conflict("campaign_locked", f"The creatives of a campaign in {campaign.status.value} cannot change.",
                       currentStatus=campaign.status.value)


