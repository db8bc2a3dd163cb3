"""GET /api/serve: what a publisher's page shows (a banner, a standalone unit, or nothing), open to any origin; and
GET /api/consent: whether the page's consent signals let the embed keep a viewer id (``adnet.delivery.consent``)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, RootModel
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.campaigns.banners import banner_address
from adnet.delivery import serving
from adnet.delivery.commands import ConsentSignals, ServeQuery
from adnet.delivery.consent import limitation
from adnet.services import Services
from api.http import answer, with_query
from api.schemas import PublicTask, Schema, public_task, refusals
from web.context import client
from web.limits import settings_limit

blueprint = Blueprint("api_serve", __name__, url_prefix="/api")


class AdOut(Schema):
    """The banner: its image or video, its landing page, and the token its impression and click are reported
    with."""

    id: str
    campaign_id: str
    banner_url: str
    target_url: str
    description: str
    media_type: str
    tracking_token: str


class BannerOut(Schema):
    """A banner, whether a click on it is paid, and up to two tasks attached to it."""

    kind: Literal["BANNER"]
    ad: AdOut
    banner_click_active: bool
    attached_tasks: list[PublicTask]


class UnitOut(Schema):
    """A standalone unit to answer at POST /api/interactions."""

    kind: Literal["POLL", "FEEDBACK", "SURVEY"]
    task: PublicTask


class HouseAdOut(Schema):
    """The site's own banner: its impressions and clicks go to ``POST /api/track/house``, never paid."""

    id: str
    banner_url: str
    target_url: str
    description: str
    size: str


class HouseOut(Schema):
    """One of the site's house ads, for a banner slot no paid campaign fills."""

    kind: Literal["HOUSE"]
    ad: HouseAdOut


class NothingOut(Schema):
    """Nothing to show in this slot now."""

    kind: Literal["NONE"]


Served = BannerOut | UnitOut | HouseOut | NothingOut


class ServeOut(RootModel[Annotated[Served, Field(discriminator="kind")]]):
    """What the slot shows, by ``kind``."""


NOTHING = NothingOut(kind="NONE")


def served(decision: serving.Decision, base_url: str, chain_id: int) -> Served:
    """The answer for ``decision`` (``base_url``: adnet's public URL, under which adnet's own files and links lie;
    ``chain_id``: the chain the tasks' transactions go to): the member of ``ServeOut`` its kind names, written as
    it stands. Wrapping it in ``ServeOut``, whose JSON is the same, would validate and
    serialize it once more on every serve."""
    if decision.banner is not None:
        banner, creative = decision.banner, decision.banner.creative
        ad = AdOut(id=creative.id, campaign_id=creative.campaign_id,
                   banner_url=banner_address(creative.banner_url, base_url),
                   target_url=creative.target_url, description=creative.description, media_type=creative.media_type,
                   tracking_token=banner.tracking_token)
        return BannerOut(kind="BANNER", ad=ad, banner_click_active=banner.click_active,
                         attached_tasks=[public_task(view, base_url, chain_id) for view in banner.attached_tasks])
    if decision.unit is not None:
        return UnitOut(kind=decision.kind, task=public_task(decision.unit, base_url, chain_id))  # type: ignore[arg-type]
    if decision.house_ad is not None:
        house_ad = decision.house_ad
        return HouseOut(kind="HOUSE", ad=HouseAdOut(
            id=house_ad.id, banner_url=house_ad.banner_url, target_url=house_ad.target_url,
            description=house_ad.description, size=house_ad.size))
    return NOTHING


@blueprint.get("/serve")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_query(ServeQuery)
@document_response(ServeOut)
@refusals(400, 404, 429)
async def serve(query_args: ServeQuery, run: Services) -> Response:
    """A banner (``kind`` BANNER with ``ad``, ``bannerClickActive``, ``attachedTasks``), a standalone unit
    (``kind`` POLL, FEEDBACK or SURVEY with ``task``), the site's own house ad for a banner slot no paid campaign
    fills (``kind`` HOUSE with ``ad``, counted by ``/api/track/house``, never billed), or ``{"kind": "NONE"}``.
    Unknown site: 404."""
    return answer(served(await serving.serve(run.serving, query_args, client()), run.settings.public_url,
                         run.chain.chain_id))


class ConsentOut(Schema):
    """Whether events and serves with these signals are consent-limited, and why (``reason``, null when not)."""

    limited: bool
    reason: str | None


@blueprint.get("/consent")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_query(ConsentSignals)
@document_response(ConsentOut)
@refusals(400, 429)
async def consent(query_args: ConsentSignals, run: Services) -> Response:
    """Whether the page's consent signals (``gdpr``, ``gdprConsent``, ``gpp``, ``gppSid``, as ``/api/serve`` and
    ``/api/track`` take them) let the embed keep a viewer id on the device: the same rule serve and track apply to
    the strings they receive (``limited`` true: the embed keeps none, and adnet records the events as
    consent-limited). A string that cannot be decoded: 400 ``invalid_consent``."""
    reason = limitation(query_args, run.settings.iab_vendor_id)
    return answer(ConsentOut(limited=reason is not None, reason=reason))
