"""Ids and cursors are checked by their shape before any query (``adnet.core.ids.has_prefix``,
``adnet.db.cursors``): a string of any length or character in a cursor is 400 ``invalid_cursor``, in a path's id a
404 (or the refusal of a record the wallet may not read), never a 5xx. Property-based (hypothesis) over every
paginated route and every GET route with an id in its path, as the OpenAPI document lists them, signed in as a
wallet that owns a site, an advertiser account and a campaign."""

from __future__ import annotations

from urllib.parse import quote

import hypothesis
import pytest
from eth_account import Account
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from adnet.core.ids import new_id, new_ordered_id
from adnet.money import ledger
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.factories import G, fund, make_advertiser, make_campaign, make_publisher, make_site

PREFIXES = ["wd", "site", "cmp", "au", "task", "wh", "adv", "pub", "int", "ad"]
# Strings a client may send where an id goes: any text; text shaped almost like an id (any prefix, characters an id
# has, too short, or too long for the column); ids with a byte no id has (NUL, a quote, a space, a slash, non-ASCII).
IDS = st.one_of(
    st.text(max_size=100),
    st.builds(lambda prefix, rest: f"{prefix}_{rest}", st.sampled_from(PREFIXES),
              st.text(alphabet="AZaz09_-", max_size=80)),
    st.builds(lambda prefix, rest: f"{prefix}_{rest}", st.sampled_from(PREFIXES),
              st.text(alphabet="AZaz09_-", min_size=41, max_size=70)),
    st.builds(lambda prefix, rest, odd, at: f"{prefix}_{rest[:at]}{odd}{rest[at:]}", st.sampled_from(PREFIXES),
              st.text(alphabet="Aa0_-", min_size=8, max_size=40),
              st.sampled_from(["\x00", "'", " ", "é", "%", "\n", "\\"]), st.integers(0, 40)),
)
# A cursor's refusal: of its shape, or of a NUL byte, which no text field of a request may hold.
CURSOR_REFUSALS = {"invalid_cursor", "invalid_field"}
# The app and the signed-in wallet are made once for all examples of a test: every request only reads.
EXAMPLES = hypothesis.settings(max_examples=60, deadline=None, derandomize=True,
                               suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def settings(database_url, tmp_path):
    """The suite's settings, with limits no fuzzing run reaches."""
    return make_settings(database_url, tmp_path, ADNET_RATE_LIMIT_ACCOUNT="100000/60")


@pytest.fixture
async def owner(client):
    """A signed-in wallet with a site, an advertiser account and a campaign: (token, {path parameter: its id})."""
    account = Account.create()
    token = await sign_in(client, account)
    wallet = account.address.lower()
    site = await make_site(await make_publisher(wallet))
    advertiser = await make_advertiser(wallet)
    campaign = await make_campaign(advertiser)
    await fund(ledger.site(site.id), 5 * G)
    return token, {"site_id": site.id, "campaign_id": campaign.id, "account_id": advertiser.id}


@pytest.fixture
async def paged(client) -> list[str]:
    """Every paginated route: the GET paths of the OpenAPI document that take a cursor (``before``)."""
    return await operations(client, lambda path, query: "before" in query)


@pytest.fixture
async def with_ids(client) -> list[str]:
    """Every GET path of the OpenAPI document with an id in its path."""
    return await operations(client, lambda path, query: "{" in path)


async def operations(client, test) -> list[str]:
    """The GET paths of the OpenAPI document that ``test`` picks (given the path and its query parameters)."""
    document = await (await client.get("/openapi.json")).get_json()
    return [path for path, methods in document["paths"].items() if "get" in methods
            and test(path, {parameter["name"] for parameter in methods["get"].get("parameters", [])
                            if parameter["in"] == "query"})]


def filled(path: str, values: dict[str, str], last: str | None = None) -> str:
    """``path`` with each ``{name}`` replaced by ``values``'s id, its last one by ``last`` (quoted) when given."""
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    for name in names:
        value = quote(last, safe="") if last is not None and name == names[-1] else values.get(name, "x")
        path = path.replace("{" + name + "}", value)
    return path


@EXAMPLES
@given(cursor=IDS)
async def test_every_paginated_route_takes_a_cursor_of_any_shape_without_a_5xx(client, owner, paged, cursor):
    token, values = owner
    assert len(paged) >= 2
    for path in paged:
        response = await client.get(filled(path, values), query_string={"before": cursor}, headers=bearer(token))
        body = await response.get_json()
        assert response.status_code == 400, (path, cursor, body)  # no withdrawal exists: none is named
        assert body["field"] == "before" and body["error"] in CURSOR_REFUSALS, (path, cursor, body)


async def test_a_cursor_of_the_right_shape_naming_no_record_is_refused(client, owner, paged):
    token, values = owner
    for path in paged:
        for cursor in (new_id("wd"), new_ordered_id("wd"), "wd_" + "A" * 40):
            response = await client.get(filled(path, values), query_string={"before": cursor}, headers=bearer(token))
            assert response.status_code == 400 and (await response.get_json())["error"] == "invalid_cursor"
        too_long = "wd_" + "A" * 50  # the length that reached the database and answered 500
        response = await client.get(filled(path, values), query_string={"before": too_long}, headers=bearer(token))
        assert response.status_code == 400 and (await response.get_json())["field"] == "before"


@EXAMPLES
@given(identifier=IDS)
async def test_every_id_in_a_path_of_any_shape_is_refused_without_a_5xx(client, owner, with_ids, identifier):
    # Not one path segment (the test client sends %2F as a slash): a redirect, or another route.
    hypothesis.assume(identifier not in ("", ".", "..") and "/" not in identifier)
    token, values = owner
    assert len(with_ids) >= 15
    for path in with_ids:
        response = await client.get(filled(path, values, identifier), headers=bearer(token))
        assert response.status_code in (400, 403, 404), (path, identifier, response.status_code)
        assert (await response.get_json())["error"], (path, identifier)
