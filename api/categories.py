"""``GET /api/categories``: adnet's campaign categories with their IAB Ad Product Taxonomy ids (rules in
``adnet.campaigns.taxonomy``), what advertisers pick and publishers block, for clients that speak IAB ids; and
``GET /api/content-categories``: the IAB Content Taxonomy sites describe their content with
(``adnet.accounts.content_taxonomy``)."""

from __future__ import annotations

from pydantic import Field
from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.content_taxonomy import ContentCategory, content_taxonomy
from adnet.campaigns import taxonomy
from api.http import answer
from api.schemas import IAB_ID, Schema
from web.limits import settings_limit

blueprint = Blueprint("api_categories", __name__, url_prefix="/api")


class CategoryEntryOut(Schema):
    """One of adnet's categories (its name is the label) and the IAB entry it maps to."""

    category: str
    iab_id: str = Field(description=IAB_ID)
    iab_name: str = Field(description="the IAB entry's name")


class CategoriesOut(Schema):
    """The taxonomy the ids belong to, its version, and every category."""

    taxonomy: str
    version: str
    categories: list[CategoryEntryOut]


@blueprint.get("/categories")
@rate_limit(limits=settings_limit("rate_limit_public"))
@document_response(CategoriesOut)
async def categories() -> Response:
    """Every campaign category with its IAB Ad Product Taxonomy 2.0 id and name (several of adnet's categories may
    share one IAB entry). Campaigns answer ``categoryIabId`` beside ``category``, site controls
    ``blockedCategoryIabIds`` beside ``blockedCategories``."""
    products = taxonomy.ad_products()
    body = CategoriesOut(taxonomy=products.name, version=products.version, categories=[
        CategoryEntryOut(category=entry.category.value, iab_id=entry.iab_id, iab_name=entry.iab_name)
        for entry in products.entries.values()])
    return answer(body, headers={"Cache-Control": "public, max-age=3600"})


class ContentCategoryOut(Schema):
    """One entry of the Content Taxonomy: its id, its parent's (null for a first tier), its name and its path."""

    id: str
    parent: str | None
    name: str
    label: str = Field(description="its tiers' names, from the first")


def content_category_out(entry: ContentCategory) -> ContentCategoryOut:
    return ContentCategoryOut(id=entry.id, parent=entry.parent, name=entry.name, label=entry.label)


class ContentCategoriesOut(Schema):
    """The taxonomy, its version, and every entry."""

    taxonomy: str
    version: str
    categories: list[ContentCategoryOut]


@blueprint.get("/content-categories")
@rate_limit(limits=settings_limit("rate_limit_public"))
@document_response(ContentCategoriesOut)
async def content_categories() -> Response:
    """Every entry of the IAB Content Taxonomy 3.1, the ids a site's ``contentCategories`` take."""
    content = content_taxonomy()
    body = ContentCategoriesOut(taxonomy=content.name, version=content.version,
                                categories=[content_category_out(entry) for entry in content.entries.values()])
    return answer(body, headers={"Cache-Control": "public, max-age=3600"})
