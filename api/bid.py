"""POST /api/bid: the bids adnet answers Prebid.js's ``adnet`` bidder (``integrations/prebid/``), open to any origin.

A bid is what ``GET /api/serve`` would answer a banner slot, decided the same way from memory; its ``ad`` is the
markup that draws the banner and reports its impression to ``/api/track`` with the serve's token
(``adnet.delivery.bidding``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.delivery import bidding
from adnet.delivery.commands import BidRequest
from adnet.services import Services
from api.http import answer, with_body
from api.schemas import Schema, refusals
from web.context import client
from web.limits import settings_limit

blueprint = Blueprint("api_bid", __name__, url_prefix="/api")


class BidMetaOut(Schema):
    """What Prebid keeps about the buyer: the landing pages' domains."""

    advertiser_domains: list[str]


class BidOut(Schema):
    """One bid, in the fields of a Prebid bid response."""

    request_id: str = Field(description="the slot's bidId")
    cpm: float = Field(description="what the publisher earns per 1000 billed impressions, in currency")
    currency: str = Field(description="G$, or the operator's ADNET_BID_CURRENCY")
    width: int
    height: int
    ad: str = Field(description="HTML that draws the banner and reports its impression to /api/track")
    ttl: int = Field(description="seconds the bid may wait to be rendered")
    creative_id: str
    net_revenue: Literal[True]
    media_type: Literal["banner"]
    meta: BidMetaOut


class BidsOut(Schema):
    """A bid for each slot a campaign fills at or above its floor; none for the others."""

    bids: list[BidOut]


@blueprint.post("/bid")
@rate_limit(limits=settings_limit("rate_limit_public"))
@with_body(BidRequest)
@document_response(BidsOut)
@refusals(400, 404, 413, 415, 429)
async def bid(data: BidRequest, run: Services) -> Response:
    """Bids for Prebid.js's adnet bidder: for each slot, the banner ``/api/serve`` would show in one of its sizes,
    priced net of adnet's share, or no bid. Unknown site: 404."""
    offers = await bidding.answer_bids(run.serving, data, client(), run.settings)
    return answer(BidsOut(bids=[BidOut(
        request_id=offer.bid_id, cpm=float(offer.cpm), currency=offer.currency, width=offer.width,
        height=offer.height, ad=offer.markup, ttl=offer.ttl, creative_id=offer.creative_id, net_revenue=True,
        media_type="banner", meta=BidMetaOut(advertiser_domains=list(offer.advertiser_domains)))
        for offer in offers]))
