"""A campaign's creatives (the spec's ``ad``): banners with their landing page, size and media type.

Editing a creative of a reviewed campaign (approved or paused) sends that creative alone back to review, so the
campaign's other creatives keep serving and the edited one serves only after an operator approves it. Its
``weight`` is a delivery setting, not content: an edit that changes nothing but the weight keeps the creative's
review.

A banner is checked before it is stored (``adnet.campaigns.banners``): https, a size the campaign takes, and an
image file of the size it claims.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from tortoise.exceptions import IntegrityError

from adnet.accounts.fetching import Fetcher
from adnet.accounts.members import require_role, role_in
from adnet.accounts.models import MemberRole
from adnet.campaigns.banners import banner_address, check_banner
from adnet.campaigns.campaigns import owned_campaign
from adnet.campaigns.commands import CreativeChanges, NewCreative
from adnet.campaigns.models import Campaign, CampaignStatus, Creative, CreativeStatus
from adnet.core import changes
from adnet.core.errors import Conflict, NotFound
from adnet.core.ids import has_prefix, new_id
from adnet.core.inputs import dimensions

log = logging.getLogger(__name__)


async def add_creative(wallet: str, campaign_id: str, creative: NewCreative, now: datetime,
                       fetcher: Fetcher) -> Creative:
    """A new creative of the wallet's campaign, in review: with the campaign when it has not been reviewed yet, or
    on its own (the rest keeps serving) when the campaign is approved or paused. Conflict ``campaign_locked`` while the
    campaign is in review or ended; Invalid when its banner fails ``check_banner`` (fetched with ``fetcher``)."""
    campaign = await owned_campaign(wallet, campaign_id)
    _check_creatives_editable(campaign)
    await check_banner(fetcher, creative.banner_url, creative.size, creative.media_type, campaign.sizes)
    try:
        added = await Creative.create(id=new_id("ad"), campaign=campaign, status=CreativeStatus.REVIEW,
                                      created_at=now, updated_at=now, **_stored(creative.model_dump()))
    except IntegrityError:  # the draft was deleted meanwhile (adnet.tasks.drafts)
        raise NotFound.of("campaign") from None
    log.info("creative added creative=%s campaign=%s", added.id, campaign.id)
    return added


async def edit_creative(wallet: str, creative_id: Any, edit: CreativeChanges, now: datetime,
                        fetcher: Fetcher, public_url: str) -> Creative:
    """Change a creative of the wallet's campaign; when its content changed, it goes back to review (and stops
    serving until approved), while the campaign's other creatives keep serving. A change of its banner, size or
    media is checked as a new banner is (``check_banner``); a form that gives them back unchanged fetches nothing.
    A banner of adnet's own, stored as a path, is named by its address under ``public_url``
    (``banner_address``): that address given back is the same banner, kept as stored."""
    creative = await owned_creative(wallet, creative_id)
    _check_creatives_editable(creative.campaign)
    current = (banner_address(creative.banner_url, public_url), f"{creative.width}x{creative.height}",
               creative.media_type)
    banner = (edit.banner_url or current[0], edit.size or current[1], edit.media_type or current[2])
    if banner != current:
        await check_banner(fetcher, *banner, creative.campaign.sizes)
    values = _stored(edit.changed())
    if values.get("banner_url") == current[0]:
        values["banner_url"] = creative.banner_url
    content = any(getattr(creative, field) != value for field, value in values.items() if field != "weight")
    review = {"status": CreativeStatus.REVIEW, "rejection_reason": ""} if content else {}
    await Creative.filter(id=creative.id).update(updated_at=now, **review, **values)
    await creative.refresh_from_db()
    changes.announce(creative.id)
    log.info("creative edited creative=%s campaign=%s back_to_review=%d", creative.id, creative.campaign.id,
             content)
    return creative


async def owned_creative(wallet: str, creative_id: Any, need: MemberRole = MemberRole.MANAGER) -> Creative:
    """The creative ``creative_id`` (with its campaign) when ``wallet`` owns its campaign's account or holds at least
    ``need`` on it: NotFound / Forbidden."""
    if not isinstance(creative_id, str) or not has_prefix(creative_id, "ad"):
        raise NotFound.of("ad")
    creative = await Creative.get_or_none(id=creative_id).select_related("campaign__advertiser")
    if creative is None:
        raise NotFound.of("ad")
    require_role(await role_in(creative.campaign.advertiser, wallet), need, "creative", field="adId")
    return creative


def _stored(values: dict[str, Any]) -> dict[str, Any]:
    """A creative's fields as the model stores them: the size as its width and height."""
    size = values.pop("size", None)
    if size is not None:
        values["width"], values["height"] = dimensions(size)
    return values


def _check_creatives_editable(campaign: Campaign) -> None:
    if campaign.status in (CampaignStatus.REVIEW, CampaignStatus.ENDED):
        raise Conflict("campaign_locked", f"The creatives of a campaign in {campaign.status.value} cannot change.",
                       currentStatus=campaign.status.value)


