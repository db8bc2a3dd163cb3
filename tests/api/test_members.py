"""Members of a publisher account through HTTP: each signs in with its own wallet; a viewer reads the account's
sites, balances and traffic but changes nothing, a manager manages sites and money (paid to the account's wallet),
an owner also manages members; a removed member is refused at once, and strangers are refused throughout. Adding
members is refused alike for publisher and advertiser accounts (``test_advertiser_members`` has the rest of
advertisers')."""

from __future__ import annotations

import asyncio

import pytest
from eth_account import Account

from adnet.accounts.models import AdvertiserMember, PublisherMember, Site
from adnet.money import ledger
from adnet.money.models import Withdrawal
from tests.auth_helpers import bearer, sign_in
from tests.factories import G, fund, make_advertiser, make_publisher, make_site


class Wallet:
    """A signed-in wallet's calls."""

    def __init__(self, client, account, token: str) -> None:
        self.client, self.account, self.token = client, account, token

    @property
    def address(self) -> str:
        return self.account.address

    async def get(self, path: str, **query):
        response = await self.client.get(path, query_string=query, headers=bearer(self.token))
        return response.status_code, await response.get_json()

    async def post(self, path: str, query: dict | None = None, **body):
        response = await self.client.post(path, json=body, query_string=query, headers=bearer(self.token))
        return response.status_code, await response.get_json()

    async def patch(self, path: str, **body):
        response = await self.client.patch(path, json=body, headers=bearer(self.token))
        return response.status_code, await response.get_json()


async def signed_in(client) -> Wallet:
    account = Account.create()
    return Wallet(client, account, await sign_in(client, account))


@pytest.fixture
async def account(client):
    """A publisher account (its owner signed in) with one site holding 5 G$: (owner, publisher, site)."""
    owner = await signed_in(client)
    publisher = await make_publisher(owner.address.lower())
    site = await make_site(publisher)
    await fund(ledger.site(site.id), 5 * G)
    return owner, publisher, site


def members_path(publisher) -> str:
    return f"/api/publishers/accounts/{publisher.id}/members"


async def test_a_viewer_reads_the_account_and_changes_nothing(client, account):
    owner, publisher, site = account
    viewer = await signed_in(client)
    status, body = await owner.post(members_path(publisher), wallet=viewer.address, role="viewer")
    assert status == 201 and body["role"] == "viewer" and body["wallet"] == viewer.address

    status, listed = await viewer.get("/api/publishers/sites", wallet=viewer.address)
    assert status == 200 and [row["siteId"] for row in listed["sites"]] == [site.id]
    status, balance = await viewer.get("/api/publishers/balance", wallet=viewer.address, siteId=site.id)
    assert status == 200 and balance["claimable"] == "5"
    assert (await viewer.get(f"/api/publishers/sites/{site.id}/traffic"))[0] == 200

    for path, body in ((f"/api/publishers/sites/{site.id}/deactivate", {}), ("/api/publishers/withdraw", {
            "siteId": site.id, "amount": "1"}), (f"/api/publishers/sites/{site.id}/verify", {})):
        status, refused = await viewer.post(path, wallet=viewer.address, **body)
        assert status == 403, path
        assert (refused["error"], refused["role"], refused["needed"]) == ("insufficient_role", "viewer", "manager")
    status, refused = await viewer.post(members_path(publisher), wallet=Account.create().address, role="viewer")
    assert status == 403 and refused["needed"] == "owner"
    assert (await Site.get(id=site.id)).active is True and await Withdrawal.all().count() == 0


async def test_a_manager_manages_sites_and_money_paid_to_the_account(client, account):
    owner, publisher, site = account
    manager = await signed_in(client)
    await owner.post(members_path(publisher), wallet=manager.address, role="manager")

    status, body = await manager.post(f"/api/publishers/sites/{site.id}/deactivate", wallet=manager.address)
    assert status == 200 and body["active"] is False
    status, withdrawn = await manager.post("/api/publishers/withdraw", wallet=manager.address, siteId=site.id,
                                           amount="2")
    assert status == 201
    assert withdrawn["transaction"]["recipient"] == owner.address  # the account's wallet, never the manager's
    status, refused = await manager.post(members_path(publisher), wallet=Account.create().address, role="owner")
    assert (status, refused["error"]) == (403, "insufficient_role")


async def added_by_a_co_owner(client, clock, owner: Wallet, path: str, role: str) -> tuple[Wallet, Wallet, dict]:
    """The owner adds a co-owner, who adds a member with ``role``; the member lists both, oldest first: (co-owner,
    member, the listing)."""
    co_owner, member = await signed_in(client), await signed_in(client)
    await owner.post(path, wallet=co_owner.address, role="owner")
    clock.advance(seconds=1)
    status, _ = await co_owner.post(path, wallet=member.address, role=role)
    assert status == 201
    status, listed = await member.get(path)
    assert status == 200 and listed["owner"] == owner.address
    assert [(row["wallet"], row["role"]) for row in listed["members"]] == [
        (co_owner.address, "owner"), (member.address, role)]
    return co_owner, member, listed


async def test_an_owner_member_manages_members_and_removal_takes_effect_at_once(client, clock, account):
    owner, publisher, site = account
    co_owner, viewer, _ = await added_by_a_co_owner(client, clock, owner, members_path(publisher), "viewer")

    status, _ = await co_owner.post(f"{members_path(publisher)}/{viewer.address}/remove")
    assert status == 200
    status, refused = await viewer.get("/api/publishers/balance", wallet=viewer.address, siteId=site.id)
    assert (status, refused["error"]) == (403, "not_owner")
    status, listed = await viewer.get("/api/publishers/sites", wallet=viewer.address)
    assert listed["sites"] == []
    status, refused = await co_owner.post(f"{members_path(publisher)}/{owner.address}/remove")
    assert status == 404  # the account's own wallet is no member row: it cannot be removed


@pytest.fixture(params=["publisher", "advertiser"])
async def any_account(request, client):
    """A publisher or an advertiser account, its owner signed in: (owner, its members' path, the members' model,
    the members' path of an unknown account of the kind)."""
    owner = await signed_in(client)
    if request.param == "publisher":
        made, model = await make_publisher(owner.address.lower()), PublisherMember
    else:
        made, model = await make_advertiser(owner.address.lower()), AdvertiserMember
    kind = f"/api/{request.param}s/accounts"
    return owner, f"{kind}/{made.id}/members", model, f"{kind}/{made.id[:4]}unknown000000000000/members"


async def test_adding_is_refused_twice_for_strangers_and_for_bad_input(client, any_account):
    owner, path, model, unknown = any_account
    member, stranger = await signed_in(client), await signed_in(client)
    answers = await asyncio.gather(*[owner.post(path, wallet=member.address, role="viewer") for _ in range(5)])
    assert sorted(status for status, _ in answers) == [201] + [409] * 4
    assert await model.filter(wallet=member.address.lower()).count() == 1
    assert (await owner.post(path, wallet=owner.address, role="viewer"))[1]["error"] == "already_member"
    status, refused = await stranger.post(path, wallet=stranger.address, role="owner")
    assert (status, refused["error"]) == (403, "not_owner")
    assert (await stranger.get(path))[0] == 403
    assert (await owner.post(path, wallet="0x1234", role="viewer"))[1]["error"] == "invalid_wallet"
    assert (await owner.post(path, wallet=stranger.address, role="admin"))[0] == 400
    assert (await owner.get(unknown))[0] == 404


async def test_members_are_managed_with_the_session_only(client, any_account):
    owner, path, _, _ = any_account
    issued = await client.post("/api/keys", json={"name": "k", "scopes": ["sites:manage", "campaigns:manage"]},
                               headers=bearer(owner.token))
    key = Wallet(client, owner.account, (await issued.get_json())["token"])
    status, refused = await key.post(path, wallet=Account.create().address, role="viewer")
    assert (status, refused["error"]) == (403, "session_required")
