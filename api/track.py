"""POST /api/track: an impression or click reported by a publisher's page, open to any origin.

201 ``{"status": "recorded", "eventId"}`` once the event is committed (or, while the database is away, kept in the
host's spool: ``adnet.delivery.spool``), a click's also with ``clickUrl``, where the embed takes the viewer: the
target with the click id for conversions (``adnet.conversions.clicks``); 200 ``{"status": "duplicate"}`` for the
same fingerprint, campaign and type within the hour. Whether and why an event was billed is recorded, never returned
(see ``adnet.delivery.tracking``). ``POST /api/track/house``: an impression or click of a site's house ad, counted
and never billed (``adnet.delivery.house_ads``).
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.conversions.clicks import click_landing
from adnet.delivery import house_ads
from adnet.delivery.commands import HouseEvent, TrackEvent
from adnet.delivery.models import EventType
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import Schema, refusals
from web.context import client
from web.limits import settings_limit

blueprint = Blueprint("api_track", __name__, url_prefix="/api")


class RecordedOut(Schema):
    """The event is stored (billed or not, by rules a page is not told)."""

    status: Literal["recorded"]
    event_id: str


class ClickRecordedOut(RecordedOut):
    """A recorded click, with the landing page's address: the creative's target with the click id (under the
    campaign's click parameter) and its macros replaced (docs/conversions.md). Absent when the ad stopped serving
    since: the embed then opens the target as served."""

    click_url: str | None = None


class DuplicateOut(Schema):
    """The same fingerprint reported this campaign's event of this type within the hour: nothing was stored."""

    status: Literal["duplicate"]


@blueprint.post("/track")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(TrackEvent)
@document_response(ClickRecordedOut, 201)
@document_response(DuplicateOut, 200)
@refusals(400, 404, 413, 415, 429, 503)
async def track(data: TrackEvent, run: Services) -> Response:
    """Record an IMPRESSION or CLICK: 201 once stored (a click with ``clickUrl``, where to take the viewer), 200 for
    a duplicate within the hour. Whether it was billed is not said (that would teach a script which attempts pass):
    the site's owner and the campaign's advertiser see it in their reports. Unknown site, campaign or ad: 404. While
    the database is away, 201 once the host's spool has the event on disk (it is stored under the id answered when
    the database returns, unless it then turns out a duplicate); 503 ``database_unavailable`` when the spool is
    full."""
    result = await run.tracker.track(data, client())
    if result.event_id is None:
        return answer(DuplicateOut(status="duplicate"), 200)
    if data.type != EventType.CLICK:
        return answer(RecordedOut(status="recorded", event_id=result.event_id), 201)
    # The instant is read here, not taken as ``now``: only a click needs one, and impressions are most events.
    landing = click_landing(run.serving.index, run.settings.tracking_secret, event_id=result.event_id,
                            campaign_id=data.campaign_id, ad_id=data.ad_id, site_id=data.site_id,
                            now=run.clock.now())
    return answer(ClickRecordedOut(status="recorded", event_id=result.event_id, click_url=landing), 201)



class HouseCountedOut(Schema):
    """``counted``, or ``ignored`` for a request whose User-Agent is a bot's."""

    status: Literal["counted", "ignored"]


@blueprint.post("/track/house")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(HouseEvent)
@document_response(HouseCountedOut, 201)
@refusals(400, 404, 413, 415, 429)
async def track_house(data: HouseEvent, run: Services, now: datetime) -> Response:
    """Count an IMPRESSION or CLICK of one of the site's house ads (what ``/api/serve`` answered with ``kind``
    HOUSE): added to the site's daily counts, never billed. Unknown site, or a house ad the site does not serve: 404."""
    counted = await house_ads.record_house_event(run.serving, data, client(), now)
    return answer(HouseCountedOut(status="counted" if counted else "ignored"), 201)
