"""IAB Ad Product Taxonomy ids through HTTP: a campaign answers its category's id beside the name when created, edited
and duplicated; /api/categories lists every category with its id and the taxonomy's version; the OpenAPI document
says what the ids are."""

from __future__ import annotations

from adnet.campaigns import taxonomy
from adnet.campaigns.models import Campaign, Category
from tests.api.test_advertisers import advertiser_api, draft


async def test_a_campaign_carries_its_categorys_iab_id(client, clock):
    api = await advertiser_api(client)
    created = await draft(api, clock, category="nft")
    assert (created["category"], created["categoryIabId"]) == ("nft", "1451")  # Non-Fiat Currency > NFTs
    status, edited = await api.call("PATCH", f"/advertisers/campaigns/{created['campaignId']}", category="gambling")
    assert status == 200 and (edited["category"], edited["categoryIabId"]) == ("gambling", "1361")
    status, copied = await api.call("POST", f"/advertisers/campaigns/{created['campaignId']}/duplicate")
    assert status == 201 and (copied["category"], copied["categoryIabId"]) == ("gambling", "1361")
    renamed = (await api.call("PATCH", f"/advertisers/campaigns/{created['campaignId']}", name="Renamed"))[1]
    assert renamed["categoryIabId"] == "1361"
    stored = {campaign.category: campaign.category_iab_id for campaign in await Campaign.all()}
    assert stored == {Category.GAMBLING: "1361"}
    default = await draft(api, clock)
    assert (default["category"], default["categoryIabId"]) == ("other", taxonomy.iab_id(Category.OTHER))


async def test_the_categories_are_listed_with_their_ids_and_the_taxonomy_version(client):
    response = await client.get("/api/categories")
    assert response.status_code == 200 and response.headers["Cache-Control"] == "public, max-age=3600"
    body = await response.get_json()
    assert (body["taxonomy"], body["version"]) == ("IAB Tech Lab Ad Product Taxonomy", "2.0")
    assert [entry["category"] for entry in body["categories"]] == [category.value for category in Category]
    assert {"category": "exchange", "iabId": "1449", "iabName": "Cryptocurrency Exchanges"} in body["categories"]


async def test_the_openapi_document_names_the_iab_ids(client):
    document = await (await client.get("/openapi.json")).get_json()
    schemas = document["components"]["schemas"]
    assert "Ad Product Taxonomy 2.0" in schemas["CampaignOut"]["properties"]["categoryIabId"]["description"]
    assert "categoryIabId" in schemas["CampaignOut"]["required"]
    assert schemas["CategoryEntryOut"]["properties"]["iabId"]["description"]
    controls = document["paths"]["/api/publishers/sites/{site_id}/controls"]["get"]["responses"]["200"]
    assert "bcat" in controls["content"]["application/json"]["schema"]["properties"]["blockedCategoryIabIds"][
        "description"]
