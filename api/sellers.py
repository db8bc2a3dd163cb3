"""adnet as an advertising system: ``GET /sellers.json`` (IAB Tech Lab sellers.json 1.0, rules in
``adnet.accounts.sellers``) and, under /api/publishers/seller, whether the signed-in publisher is listed there by
name or as confidential."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts import sellers
from adnet.accounts.commands import ApiKeyScope
from adnet.accounts.models import Publisher
from adnet.accounts.sellers import Confidentiality
from adnet.core.inputs import Command, WalletAddress
from adnet.services import Services
from api.http import answer, with_body, with_query
from api.schemas import Schema, refusals
from api.sessions import named_wallet, require_account
from web.context import injected
from web.limits import ACCOUNT_LIMIT, settings_limit

blueprint = Blueprint("api_sellers", __name__)


class SellerEntryOut(BaseModel):
    """One seller: a publisher of adnet (``seller_id`` is its publisher id, as in its ads.txt line)."""

    seller_id: str
    seller_type: Literal["PUBLISHER"]
    name: str | None = Field(None, description="its first verified site's name (absent when confidential)")
    domain: str | None = Field(None, description="its first verified site's domain (absent when confidential)")
    is_confidential: Literal[1] | None = Field(None, description="1 when the publisher asked not to be named")


class IdentifierOut(BaseModel):
    name: str
    value: str


class SellersJsonOut(BaseModel):
    """The sellers.json document (field names as the specification writes them, in snake_case)."""

    contact_email: str | None = None
    contact_address: str | None = None
    version: str
    identifiers: list[IdentifierOut] | None = None
    sellers: list[SellerEntryOut]


@blueprint.get("/sellers.json")
@rate_limit(limits=settings_limit("rate_limit_public"))
@document_response(SellersJsonOut)
@injected
async def sellers_json(run: Services, now: datetime) -> Response:
    """adnet's sellers.json: every publisher holding a verified site, by name and domain or as confidential, with
    the operator's contact. Open to any origin; cached (``Cache-Control: public, max-age=ADNET_SELLERS_CACHE_SECONDS``),
    and each process rebuilds it at most that often."""
    body = await run.sellers.body(now)
    max_age = int(run.sellers.max_age.total_seconds())
    return Response(body, 200, {"Cache-Control": f"public, max-age={max_age}", "Access-Control-Allow-Origin": "*"},
                    mimetype="application/json")


class SellerQuery(Command):
    """The publisher's wallet: the signed-in one."""

    wallet: WalletAddress


class SellerSettings(Confidentiality, SellerQuery):
    """Whether sellers.json names the publisher (``false``) or lists it as confidential (``true``)."""


class SellerOut(Schema):
    """How sellers.json lists the publisher: ``sellerId`` (its publisher id), and ``confidential``: true lists it
    without name or domain."""

    seller_id: str
    confidential: bool


def _seller_out(publisher: Publisher) -> SellerOut:
    return SellerOut(seller_id=publisher.id, confidential=publisher.confidential)


@blueprint.get("/api/publishers/seller")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(SellerQuery)
@document_response(SellerOut)
@refusals(400, 403, 404)
async def seller(query_args: SellerQuery) -> Response:
    """How sellers.json lists the wallet's publisher record (404 before the wallet registered a site)."""
    return answer(_seller_out(await sellers.own_publisher(named_wallet(query_args.wallet))))


@blueprint.put("/api/publishers/seller")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.SITES)
@with_body(SellerSettings)
@document_response(SellerOut)
@refusals(400, 403, 404)
async def set_seller(data: SellerSettings) -> Response:
    """List the wallet's publisher record in sellers.json as confidential (``confidential: true``: no name, no
    domain) or by name; only the wallet that made the record may. Each process's sellers.json shows the change
    within ``ADNET_SELLERS_CACHE_SECONDS``."""
    publisher = await sellers.own_publisher(named_wallet(data.wallet))
    publisher = await sellers.set_confidential(publisher, data.confidential)
    return answer(_seller_out(publisher))
