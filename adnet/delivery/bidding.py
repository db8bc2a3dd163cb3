"""Header bidding: the bids adnet answers Prebid.js's ``adnet`` bidder (``integrations/prebid/``) at ``POST /api/bid``.

Each bid is what ``GET /api/serve`` would answer a banner slot of one of the ad unit's sizes
(``adnet.delivery.serving.bid``): the same index, rules, draw and tracking token, decided from memory. The bid's
markup loads the embed script (pinned with Subresource Integrity) in the creative's frame and has it draw that
banner and report it as the embed does: the impression once half of it was in view for one second, with the
serve's token, so the impression is billed by the same tracking rules, once however often the bid is rendered (a
bid never rendered, or never in view, is never billed).

Prices: a bid's ``cpm`` is what the publisher earns per 1000 billed impressions (``netRevenue``): the campaign's eCPM
times the publisher share, in G$ or in the currency the operator configures (``ADNET_BID_CURRENCY``) at its rate
(``ADNET_BID_CURRENCY_RATE``, units per G$). An auction's floor, net and in the page's currency, is turned into a
gross eCPM the same way back and must be reached besides the site's own floors; a floor in a currency adnet cannot
convert gets no bid rather than a bid under it.

Consent: the bidder keeps a viewer id on the device only with consent to store there (TCF purpose 1,
``integrations/prebid/adnetBidAdapter.js``), otherwise it sends one of the page only. The consent strings it passes
(``gdpr``, ``gdprConsent``, ``gpp``, ``gppSid``, the names the embed uses) feed the rule serving applies
(``adnet.delivery.consent.limitation``): a consent-limited bid is decided as a serve without a viewer id, so the
viewer is neither read in the frequency counts nor signed into the bid's token.
"""

from __future__ import annotations

import html
import json
import logging
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_DOWN, Decimal
from typing import Any

from adnet.campaigns.banners import banner_address
from adnet.config import GS_CURRENCY, Settings
from adnet.core.amounts import DECIMALS
from adnet.core.inputs import dimensions
from adnet.delivery.clients import Client
from adnet.delivery.commands import BidRequest, BidSlot, ConsentSignals, ServeQuery
from adnet.delivery.index import CreativeEntry
from adnet.delivery.sdk import sdk_integrity, sdk_version
from adnet.delivery.serving import Bid, Server, bid
from adnet.delivery.sites import host_of

log = logging.getLogger(__name__)

# How long Prebid may keep a bid: the tracking token it carries lives 15 minutes; a bid rendered later would report
# an impression with an expired token, which is never billed.
BID_TTL_SECONDS = 300


@dataclass(frozen=True)
class Offer:
    """One bid: the slot it answers, the banner and its size, and its price in the configured currency."""

    bid_id: str
    cpm: Decimal
    currency: str
    width: int
    height: int
    markup: str
    creative_id: str
    advertiser_domains: tuple[str, ...]
    ttl: int = BID_TTL_SECONDS


async def answer_bids(server: Server, request: BidRequest, client: Client, settings: Settings) -> list[Offer]:
    """A bid for each of ``request``'s slots that a campaign fills at or above its floor (none for the others);
    NotFound for an unknown site."""
    log.debug("bid site=%s slots=%d gdpr=%s tcf=%s gpp_sid=%s", request.site_id, len(request.bids), request.gdpr,
             request.gdpr_consent is not None, request.gpp_sid)
    page = ServeQuery.model_validate({"siteId": request.site_id, "viewer": request.viewer}).model_copy(
        update={name: getattr(request, name) for name in ConsentSignals.model_fields})
    offers = []
    for slot in request.bids:
        floor = gross_floor(slot.floor, slot.floor_currency, settings)
        if floor is None:
            continue
        query = page.model_copy(update={"placement": slot.placement})  # BidSlot checked it as ServeQuery would
        found = await bid(server, query, client, sizes=tuple(slot.sizes), floor=floor)
        if found is not None:
            offers.append(_offer(slot, found, request, settings))
    return offers


def _offer(slot: BidSlot, found: Bid, request: BidRequest, settings: Settings) -> Offer:
    creative = found.banner.creative
    width, height = dimensions(creative.size)
    domain = host_of(creative.target_url)
    return Offer(bid_id=slot.bid_id, cpm=net_cpm(found.ecpm, settings), currency=settings.bid_currency,
                 width=width, height=height, creative_id=creative.id,
                 markup=bid_markup(settings.public_url, request, creative, found.banner.tracking_token,
                                   found.banner.click_active),
                 advertiser_domains=(domain,) if domain else ())


def net_cpm(ecpm: float, settings: Settings) -> Decimal:
    """What the publisher earns per 1000 impressions of a campaign of eCPM ``ecpm`` (smallest units of G$, gross),
    in the bid currency, to six decimals (rounded down: a bid never promises more than is paid)."""
    net = Decimal(ecpm).scaleb(-DECIMALS) * settings.publisher_share_bps / 10_000
    return (net * _rate(settings)).quantize(Decimal("0.000001"), rounding=ROUND_DOWN)


def gross_floor(floor: float | None, currency: str | None, settings: Settings) -> float | None:
    """An auction's floor (net, in ``currency``) as the gross eCPM a campaign must reach, in smallest units of G$,
    rounded up; 0 without a floor; None when ``currency`` is neither G$ nor the bid currency (None: the bid
    currency), which adnet cannot convert."""
    if not floor:
        return 0.0
    if currency not in (None, GS_CURRENCY, settings.bid_currency) or settings.publisher_share_bps == 0:
        return None
    rate = Decimal(1) if currency == GS_CURRENCY else _rate(settings)
    gross = Decimal(str(floor)) / rate * 10_000 / settings.publisher_share_bps
    return float(gross.scaleb(DECIMALS).to_integral_value(rounding=ROUND_CEILING))


def _rate(settings: Settings) -> Decimal:
    return settings.bid_currency_rate if settings.bid_currency != GS_CURRENCY and settings.bid_currency_rate \
        else Decimal(1)


def bid_markup(public_url: str, request: BidRequest, creative: CreativeEntry, token: str, click_active: bool) -> str:
    """The HTML Prebid renders in the creative's frame: the embed script, pinned to its bytes, drawing the served
    banner as ``/api/serve`` answered it and reporting its impression and click with the serve's token. The page's
    address is passed (the frame's own is ``about:srcdoc``), and the viewer id the bid was served for, so the embed
    stores none itself."""
    served = {"kind": "BANNER", "bannerClickActive": click_active, "attachedTasks": [], "ad": {
        "id": creative.id, "campaignId": creative.campaign_id,
        "bannerUrl": banner_address(creative.banner_url, public_url), "targetUrl": creative.target_url,
        "description": creative.description, "mediaType": creative.media_type,
        "trackingToken": token}}
    options = {"served": served, "size": creative.size, "lazy": False, "pageUrl": request.page_url,
               "viewer": request.viewer}
    width, _ = dimensions(creative.size)
    return (f'<!doctype html><html><head><meta charset="utf-8"><style>body{{margin:0}}</style></head><body>'
            f'<div id="adnet-bid" style="width:{width}px"></div>'
            f'<script>window.adnet=window.adnet||[];window.adnet.push(function(adnet){{adnet.render('
            f'document.getElementById("adnet-bid"),{_script_json(options)});}});</script>'
            f'<script async src="{public_url}/sdk/{sdk_version()}/sdk.js" integrity="{sdk_integrity()}" '
            f'crossorigin="anonymous" data-site-id="{html.escape(request.site_id)}"></script></body></html>')


def _script_json(value: Any) -> str:
    """``value`` as JSON that is safe inside a ``<script>`` element (no ``</script>``, no ``<!--``)."""
    return json.dumps(value, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e").replace(
        "&", "\\u0026")
