"""The time zone a viewer reads a report's hours in (``adnet.reporting.zones``): the one the report's form names
(``tz``, remembered in a cookie for a year), else the remembered one, else UTC. Only how an hour is written changes:
the figures are counted in UTC buckets whatever the zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from markupsafe import Markup, escape
from quart import Response, after_this_request, request
from werkzeug.wrappers import Response as WerkzeugResponse

from adnet.core.clock import iso
from adnet.reporting.traffic import EventCounts
from adnet.reporting.zones import DEFAULT_ZONE, local_hour, offset_text, zone_named, zone_names
from web.context import app_settings

ZONE_COOKIE = "adnet_tz"
ZONE_SECONDS = 365 * 24 * 3600


@dataclass(frozen=True)
class ViewerZone:
    """The viewer's zone, by its IANA name, and how a report's page writes a bucket in it."""

    name: str
    zone: ZoneInfo

    @property
    def choices(self) -> tuple[str, ...]:
        """Every zone the viewer may pick."""
        return zone_names()

    def offset(self, moment: datetime) -> str:
        """The zone's offset at ``moment`` (``UTC+01:00``)."""
        return offset_text(self.zone, moment)

    def bucket(self, figures: EventCounts) -> Markup:
        """A row's bucket: its UTC day in a daily report; in an hourly one, the hour's start in the viewer's zone,
        in a ``<time>`` that carries the UTC instant."""
        if figures.hour is None:
            return escape(figures.day.isoformat() if figures.day else "total")
        return self.hour_key(iso(figures.hour))


    def hour_key(self, key: str) -> Markup:
        """A breakdown's hour (``YYYY-MM-DDTHH:00:00Z``) written in the viewer's zone, as ``bucket`` writes one."""
        hour = datetime.fromisoformat(key)
        return Markup(f'<time datetime="{escape(iso(hour))}">'  # noqa: S704 - escaped
                      f'{escape(local_hour(hour, self.zone))}</time>')


def viewer_zone() -> ViewerZone:
    """The zone the request's ``tz`` names (then remembered), else the cookie's, else UTC; a name that is not an
    IANA zone is passed over."""
    asked = request.args.get("tz", "")
    zone = zone_named(asked)
    if zone is not None:
        if asked != request.cookies.get(ZONE_COOKIE):
            @after_this_request
            async def remember(response: Response | WerkzeugResponse) -> Response | WerkzeugResponse:
                response.set_cookie(ZONE_COOKIE, asked, max_age=ZONE_SECONDS, path="/portal",
                                    secure=app_settings().secure_cookies, httponly=True, samesite="Lax")
                return response
        return ViewerZone(asked, zone)
    remembered = request.cookies.get(ZONE_COOKIE, "")
    zone = zone_named(remembered)
    if zone is not None:
        return ViewerZone(remembered, zone)
    return ViewerZone(DEFAULT_ZONE, ZoneInfo(DEFAULT_ZONE))
