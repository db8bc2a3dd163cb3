"""The banners of creatives in review, images and videos, fetched by adnet for the operators' review queue.

An advertiser's banner lives on the advertiser's host: plain http in development, any host the portal's
Content-Security-Policy may not name. So the queue shows it from adnet: ``BannerPreviews.banner`` fetches the banner
of one creative, and only of one the queue shows (a creative in review, or any creative of a campaign in review, one
already decided included) whose banner is at an absolute address. It is never an open proxy: the address is the one
stored on the creative (no address comes from the request), and the fetch is the banner check's own
(``adnet.campaigns.banners.banner_fetcher``: in production https only, the default port, public addresses only with
the host resolved and checked at connection time, redirects only within the banner's host, bounded in time). At most
``MAX_PREVIEW_BYTES`` are read for an image, ``MAX_VIDEO_PREVIEW_BYTES`` for a video (a short clip, as ad networks
bound video creatives); a file that is larger, not a 200, or not of its creative's kind (an image whose size can be
read, ``banners.image_type``; an MP4, WebM or Ogg video, ``banners.video_type``) is refused, and its media type
comes from its bytes, never from the host's Content-Type. The files held are bounded by their total size
(``MAX_HELD_BYTES``, least recently used first out) and keyed by the creative's id and last change, so an edited
banner is fetched again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from cachetools import LRUCache

from adnet.accounts.fetching import Fetcher, FetchFailed
from adnet.campaigns.banners import image_size, image_type, video_type
from adnet.campaigns.models import CampaignStatus, Creative, CreativeStatus, MediaType
from adnet.core.errors import Conflict, Invalid, NotFound
from adnet.core.ids import has_prefix

log = logging.getLogger(__name__)

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
MAX_VIDEO_PREVIEW_BYTES = 8 * 1024 * 1024
MAX_HELD_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class BannerFile:
    """A banner as adnet serves it to an operator: its bytes, the media type read from them, and an image's size in
    pixels as the file states it (None for a video, whose container may keep it anywhere)."""

    media_type: str
    body: bytes
    width: int | None
    height: int | None


class BannerPreviews:
    """Fetches the banners of creatives in review through ``fetcher`` and keeps the latest ones."""

    def __init__(self, fetcher: Fetcher, *, max_held_bytes: int = MAX_HELD_BYTES) -> None:
        self.fetcher = fetcher
        self._held: LRUCache[tuple[str, datetime], BannerFile] = LRUCache(
            maxsize=max_held_bytes, getsizeof=lambda banner: len(banner.body))

    async def banner(self, creative_id: Any) -> BannerFile:
        """The banner of the creative ``creative_id``: NotFound for no such creative, Conflict ``not_in_review``
        unless it is at an absolute address on a creative in review or of a campaign in review, Invalid
        ``banner_unreachable`` when its file cannot be fetched or is not an image of at most ``MAX_PREVIEW_BYTES``
        (a video of at most ``MAX_VIDEO_PREVIEW_BYTES``, for a video creative)."""
        creative = (await Creative.get_or_none(id=creative_id).select_related("campaign")
                    if has_prefix(creative_id, "ad") else None)
        if creative is None:
            raise NotFound.of("ad")
        in_review = (creative.status is CreativeStatus.REVIEW
                     or creative.campaign.status is CampaignStatus.REVIEW)
        if not in_review or creative.banner_url.startswith("/"):
            raise Conflict("not_in_review", "adnet shows the banner of a creative in review only, a file on the "
                                            "advertiser's host.", currentStatus=creative.status.value)
        key = (creative.id, creative.updated_at)
        held = self._held.get(key)
        if held is None:
            held = await self._fetch(creative)
            self._held[key] = held
        return held

    async def _fetch(self, creative: Creative) -> BannerFile:
        url, video = creative.banner_url, creative.media_type is MediaType.VIDEO
        most = MAX_VIDEO_PREVIEW_BYTES if video else MAX_PREVIEW_BYTES
        try:
            page = await self.fetcher.get(url, scope=urlsplit(url).hostname or "", max_bytes=most)
        except FetchFailed as failure:
            log.info("banner preview failed creative=%s reason=%s", creative.id, failure.reason)
            raise Invalid("banner_unreachable", f"The banner could not be fetched: {failure.reason}.") from None
        media_type = video_type(page.body) if video else image_type(page.body)
        size = None if video else image_size(page.body)
        if page.status != 200 or page.truncated or media_type is None or (size is None and not video):
            log.info("banner preview refused creative=%s status=%d truncated=%s", creative.id, page.status,
                     page.truncated)
            kind = "an MP4, WebM or Ogg video" if video else "an image"
            raise Invalid("banner_unreachable", f"The banner's address did not answer {kind} of at most "
                                                f"{most // (1024 * 1024)} MiB.")
        return BannerFile(media_type=media_type, body=page.body, width=size[0] if size else None,
                          height=size[1] if size else None)
