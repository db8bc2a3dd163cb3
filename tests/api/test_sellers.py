"""/sellers.json through HTTP: verified publishers listed by their publisher id with the name and domain of their
first verified site, unverified and lapsed ones left out, confidential ones without name or domain; the contact,
version and TAG-ID from the settings; valid against the sellers.json 1.0 schema (tests/data/sellers.schema.json);
JSON, cached for the configured time and open to any origin. And the publisher's setting behind
``is_confidential``, which only the wallet of the publisher record may change."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import jsonschema
import pytest
from eth_account import Account

from adnet.accounts.models import ProofMethod, Publisher, Site
from adnet.accounts.ownership import mark_verified
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.factories import EPOCH, make_publisher, make_site

SCHEMA = json.loads((Path(__file__).parent.parent / "data" / "sellers.schema.json").read_text())


@pytest.fixture
def settings(database_url, data_dir):
    return make_settings(database_url, data_dir, ADNET_SELLERS_CONTACT_EMAIL="sellers@adnet.example",
                         ADNET_SELLERS_CONTACT_ADDRESS="1 Ledger Lane, Berlin",
                         ADNET_ADS_TXT_CERTIFICATION_ID="f08c47fec0942fa0", ADNET_SELLERS_CACHE_SECONDS="600")


async def sellers_json(client) -> dict:
    response = await client.get("/sellers.json", headers={"Origin": "https://buyer.example"})
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.headers["Cache-Control"] == "public, max-age=600"
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    document = await response.get_json()
    jsonschema.validate(document, SCHEMA)
    return document


async def test_verified_publishers_are_listed_and_the_document_is_schema_valid(client, clock):
    named = await make_publisher()
    await make_site(named, domain="news.example", name="Daily News", now=EPOCH)
    await make_site(named, domain="later.example", name="Later", now=EPOCH + timedelta(days=1))
    unnamed_site = await make_site(domain="blog.example")  # no name: its domain names it
    unverified = await make_site(domain="squat.example", verified=False)
    secret = await make_publisher()
    await make_site(secret, domain="secret.example", name="Secret")
    await Publisher.filter(id=secret.id).update(confidential=True)
    lapsed = await make_site(domain="gone.example")
    await Site.filter(id=lapsed.id).update(verified=False, state="lapsed")

    document = await sellers_json(client)
    assert {key: document[key] for key in ("contact_email", "contact_address", "version", "identifiers")} == {
        "contact_email": "sellers@adnet.example", "contact_address": "1 Ledger Lane, Berlin", "version": "1.0",
        "identifiers": [{"name": "TAG-ID", "value": "f08c47fec0942fa0"}]}
    listed = {seller["seller_id"]: seller for seller in document["sellers"]}
    assert listed == {
        named.id: {"seller_id": named.id, "seller_type": "PUBLISHER", "name": "Daily News", "domain": "news.example"},
        unnamed_site.publisher_id: {"seller_id": unnamed_site.publisher_id, "seller_type": "PUBLISHER",
                                    "name": "blog.example", "domain": "blog.example"},
        secret.id: {"seller_id": secret.id, "seller_type": "PUBLISHER", "is_confidential": 1},
    }
    assert unverified.publisher_id not in listed and lapsed.publisher_id not in listed
    assert [seller["seller_id"] for seller in document["sellers"]] == sorted(listed)


async def test_the_document_is_kept_for_its_max_age(client, clock):
    first = await make_site(domain="first.example")
    assert [seller["seller_id"] for seller in (await sellers_json(client))["sellers"]] == [first.publisher_id]
    second = await make_site(domain="second.example")
    assert len((await sellers_json(client))["sellers"]) == 1  # served from memory, no query
    clock.advance(seconds=600)
    assert {seller["seller_id"] for seller in (await sellers_json(client))["sellers"]} == {
        first.publisher_id, second.publisher_id}


async def test_a_publisher_marks_itself_confidential_through_the_api(client, clock):
    account = Account.create()
    token = await sign_in(client, account)
    registered = await (await client.post("/api/publishers/register",
                                          json={"wallet": account.address, "domain": "mine.example"},
                                          headers=bearer(token))).get_json()
    publisher_id = registered["publisherId"]
    assert await (await client.get("/api/publishers/seller", query_string={"wallet": account.address},
                                   headers=bearer(token))).get_json() == {"sellerId": publisher_id,
                                                                          "confidential": False}
    site = await Site.get(id=registered["siteId"])
    await mark_verified(site, ProofMethod.META_TAG, clock.now())
    assert (await sellers_json(client))["sellers"] == [
        {"seller_id": publisher_id, "seller_type": "PUBLISHER", "name": "mine.example", "domain": "mine.example"}]

    changed = await client.put("/api/publishers/seller", json={"wallet": account.address, "confidential": True},
                               headers=bearer(token))
    assert (changed.status_code, await changed.get_json()) == (200, {"sellerId": publisher_id, "confidential": True})
    clock.advance(seconds=600)
    assert (await sellers_json(client))["sellers"] == [
        {"seller_id": publisher_id, "seller_type": "PUBLISHER", "is_confidential": 1}]


async def test_the_setting_needs_the_publishers_own_session(client):
    owner, stranger = Account.create(), Account.create()
    owner_token, stranger_token = await sign_in(client, owner), await sign_in(client, stranger)
    anonymous = await client.put("/api/publishers/seller", json={"wallet": owner.address, "confidential": True})
    assert (anonymous.status_code, (await anonymous.get_json())["error"]) == (401, "auth_required")
    other_wallet = await client.put("/api/publishers/seller", json={"wallet": owner.address, "confidential": True},
                                    headers=bearer(stranger_token))
    assert (other_wallet.status_code, (await other_wallet.get_json())["error"]) == (403, "not_owner")
    no_record = await client.put("/api/publishers/seller", json={"wallet": owner.address, "confidential": True},
                                 headers=bearer(owner_token))
    assert (no_record.status_code, (await no_record.get_json())["error"]) == (404, "not_found")
    invalid = await client.put("/api/publishers/seller", json={"wallet": owner.address, "confidential": "maybe"},
                               headers=bearer(owner_token))
    assert (invalid.status_code, (await invalid.get_json())["field"]) == (400, "confidential")
    assert await Publisher.filter(confidential=True).count() == 0


def test_the_schema_refuses_what_sellers_json_forbids():
    """The schema file is no rubber stamp: a seller without type, a named seller without domain, a bad type."""
    for seller in ({"seller_id": "p"}, {"seller_id": "p", "seller_type": "PUBLISHER", "name": "n"},
                   {"seller_id": "p", "seller_type": "OWNER", "is_confidential": 1},
                   {"seller_id": "p", "seller_type": "PUBLISHER", "domain": "d.example"}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({"version": "1.0", "sellers": [seller]}, SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "1.0"}, SCHEMA)
