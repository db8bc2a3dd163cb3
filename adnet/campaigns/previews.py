"""The banners of creatives in review, fetched by adnet for the operators' review queue.

An advertiser's banner lives on the advertiser's host: plain http in development, any host the portal's
Content-Security-Policy may not name. So the queue shows it from adnet: ``BannerPreviews.banner`` fetches the
banner of one creative, and only of one the queue shows (a creative in review, or any creative of a campaign in
review, one already decided included) whose banner is an image at an absolute address. It is
never an open proxy: the address is the one stored on the creative (no address comes from the request), and the
fetch is the banner check's own (``adnet.campaigns.banners.banner_fetcher``: in production https only, the default
port, public addresses only with the host resolved and checked at connection time, redirects only within the
banner's host, bounded in time). At most ``MAX_PREVIEW_BYTES`` are read; a file that is larger, not a 200, or not an
image whose size can be read (``banners.image_type``) is refused, and its media type comes from its bytes, never
from the host's Content-Type. The files held are bounded by their total size (``MAX_HELD_BYTES``, least recently
used first out) and keyed by the creative's id and last change, so an edited banner is fetched again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from cachetools import LRUCache

from adnet.accounts.fetching import Fetcher, FetchFailed
from adnet.campaigns.banners import image_size, image_type
from adnet.campaigns.models import CampaignStatus, Creative, CreativeStatus, MediaType
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix

log = logging.getLogger(__name__)

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
MAX_HELD_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class BannerFile:
    """A banner as adnet serves it to an operator: its bytes, the media type read from them, and its size in
    pixels as the file states it."""

    media_type: str
    body: bytes
    width: int
    height: int


class BannerPreviews:
    """Fetches the banners of creatives in review through ``fetcher`` and keeps the latest ones."""

    def __init__(self, fetcher: Fetcher, *, max_held_bytes: int = MAX_HELD_BYTES) -> None:
        self.fetcher = fetcher
        self._held: LRUCache[tuple[str, datetime], BannerFile] = LRUCache(
            maxsize=max_held_bytes, getsizeof=lambda banner: len(banner.body))

    async def banner(self, creative_id: Any) -> BannerFile:
        """The banner of the creative ``creative_id``: NotFound for no such creative, Conflict ``not_in_review``
        unless it is an image at an absolute address on a creative in review or of a campaign in review, Invalid
        ``banner_unreachable`` when its file cannot be fetched or is not an image of at most
        ``MAX_PREVIEW_BYTES``."""
        creative = (await Creative.get_or_none(id=creative_id).select_related("campaign")
                    if has_prefix(creative_id, "ad") else None)
        if creative is None:
            raise NotFound.of("ad")
        in_review = (creative.status is CreativeStatus.REVIEW
                     or creative.campaign.status is CampaignStatus.REVIEW)
        if not in_review or creative.media_type is not MediaType.IMAGE or creative.banner_url.startswith("/"):
            raise Conflict("not_in_review", "adnet shows the banner of a creative in review only, an image on "
                                            "the advertiser's host.", currentStatus=creative.status.value)
        key = (creative.id, creative.updated_at)
        held = self._held.get(key)
        if held is None:
            held = await self._fetch(creative)
            self._held[key] = held
        return held

    async def _fetch(self, creative: Creative) -> BannerFile:
        url = creative.banner_url
        try:
            page = await self.fetcher.get(url, scope=urlsplit(url).hostname or "", max_bytes=MAX_PREVIEW_BYTES)
        except FetchFailed as failure:
            log.info("banner preview failed creative=%s reason=%s", creative.id, failure.reason)
            raise Invalid("banner_unreachable", f"The banner could not be fetched: {failure.reason}.") from None
        media_type, size = image_type(page.body), image_size(page.body)
        if page.status != 200 or page.truncated or media_type is None or size is None:
            log.info("banner preview refused creative=%s status=%d truncated=%s", creative.id, page.status,
                     page.truncated)
            raise Invalid("banner_unreachable", "The banner's address did not answer an image of at most "
                                                f"{MAX_PREVIEW_BYTES // (1024 * 1024)} MiB.")
        return BannerFile(media_type=media_type, body=page.body, width=size[0], height=size[1])
