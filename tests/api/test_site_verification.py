"""Site ownership through HTTP, against a real site: a server on 127.0.0.1 the test puts pages on (reachable in
test mode, which allows http and loopback addresses). Registering proves nothing and blocks no one; each of the
three proofs verifies; a proof takes the domain from a squatter or a lapsed holder, never from a holder that still
proves it; of concurrent provers exactly one wins; the re-check job lapses a site that lost its proof."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta

import pytest
from eth_account import Account

from adnet.accounts.fetching import Fetcher, FetchPolicy
from adnet.accounts.models import Site, SiteState, VerifiedDomain
from adnet.accounts.proofs import ads_txt_line
from adnet.core import changes
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.factories import make_site
from tests.site_server import DOMAIN, Answer, serve_site


@pytest.fixture
def settings(database_url, data_dir, site_server):
    """Test settings whose verification fetches go to the test's site server."""
    return make_settings(database_url, data_dir, ADNET_SITE_CHECK_PORT=str(site_server.port))


class Publisher:
    """A signed-in wallet of the test client."""

    def __init__(self, client, account, token: str) -> None:
        self.client, self.account, self.token = client, account, token

    @property
    def wallet(self) -> str:
        return self.account.address

    async def register(self, domain: str = DOMAIN):
        return await self.client.post("/api/publishers/register", json={"wallet": self.wallet, "domain": domain},
                                      headers=bearer(self.token))

    async def site(self, domain: str = DOMAIN) -> Site:
        response = await self.register(domain)
        assert response.status_code in (200, 201), await response.get_json()
        return await Site.get(id=(await response.get_json())["siteId"])

    async def verify(self, site_id: str):
        return await self.client.post(f"/api/publishers/sites/{site_id}/verify", json={"wallet": self.wallet},
                                      headers=bearer(self.token))


@pytest.fixture
def publisher(client):
    async def signed_in() -> Publisher:
        account = Account.create()
        return Publisher(client, account, await sign_in(client, account))

    return signed_in


async def state_of(site: Site) -> tuple[SiteState, bool]:
    await site.refresh_from_db()
    return site.state, site.verified


async def test_registering_proves_nothing_and_blocks_no_one(publisher):
    first, second, third = await publisher(), await publisher(), await publisher()
    responses = [await first.register("news.example.com"), await second.register("https://www.NEWS.example.com/"),
                 await third.register("news.example.com")]
    assert [response.status_code for response in responses] == [201, 201, 201]
    bodies = [await response.get_json() for response in responses]
    assert len({body["siteId"] for body in bodies}) == 3
    assert all(body["verification"]["state"] == "unverified" and body["verification"]["verified"] is False
               for body in bodies)
    again = await first.register("NEWS.example.com.")
    assert again.status_code == 200 and (await again.get_json())["siteId"] == bodies[0]["siteId"]
    assert await Site.filter(domain="news.example.com").count() == 3
    assert await VerifiedDomain.all().count() == 0


async def test_the_site_answers_carry_the_token_and_the_exact_text_of_each_proof(publisher, client):
    owner = await publisher()
    body = await (await owner.register("news.example.com")).get_json()
    site = await Site.get(id=body["siteId"]).select_related("publisher")
    verification = body["verification"]
    assert verification["token"] == site.verification_token and len(site.verification_token) == 32
    assert {key: verification[key] for key in ("state", "verified", "method", "verifiedAt", "lastCheckedAt",
                                               "lastFailure")} == {
        "state": "unverified", "verified": False, "method": None, "verifiedAt": None, "lastCheckedAt": None,
        "lastFailure": ""}
    assert verification["instructions"] == [
        {"method": "meta_tag", "title": "Meta tag on the home page",
         "location": "the <head> of https://news.example.com/",
         "text": f'<meta name="adnet-site-verification" content="{site.verification_token}">'},
        {"method": "well_known", "title": "File on the site",
         "location": "https://news.example.com/.well-known/adnet.txt", "text": site.verification_token},
        {"method": "ads_txt", "title": "Line in ads.txt", "location": "https://news.example.com/ads.txt",
         "text": f"adnet.test, {site.publisher.id}, DIRECT"},
    ]
    listed = await (await client.get("/api/publishers/sites", query_string={"wallet": owner.wallet},
                                     headers=bearer(owner.token))).get_json()
    assert listed["sites"][0]["verification"] == verification
    rival = await (await (await publisher()).register("news.example.com")).get_json()
    assert rival["verification"]["token"] != site.verification_token  # each site has its own


async def test_a_meta_tag_on_the_home_page_verifies_the_site(publisher, site_server, clock):
    owner = await publisher()
    site = await owner.site()
    site_server.home_page_with(site)
    response = await owner.verify(site.id)
    assert response.status_code == 200, await response.get_json()
    body = await response.get_json()
    assert body["siteId"] == site.id and body["domain"] == DOMAIN
    assert {key: body["verification"][key] for key in ("state", "verified", "method", "lastFailure")} == {
        "state": "verified", "verified": True, "method": "meta_tag", "lastFailure": ""}
    assert body["verification"]["verifiedAt"] == body["verification"]["lastCheckedAt"] == (
        clock.now().isoformat().replace("+00:00", "Z"))
    assert await state_of(site) == (SiteState.VERIFIED, True)
    assert (await VerifiedDomain.get(domain=DOMAIN)).site_id == site.id
    assert site_server.requested == ["/"]  # the first proof found ends the check


async def test_the_well_known_file_verifies_the_site(publisher, site_server):
    owner = await publisher()
    site = await owner.site()
    site_server.pages["/.well-known/adnet.txt"] = Answer(body=f"{site.verification_token}\n",
                                                        headers={"Content-Type": "text/plain"})
    response = await owner.verify(site.id)
    assert response.status_code == 200
    assert (await response.get_json())["verification"]["method"] == "well_known"
    assert site_server.requested == ["/", "/.well-known/adnet.txt"]


async def test_an_ads_txt_line_naming_adnet_and_the_publisher_verifies_the_site(publisher, site_server):
    owner = await publisher()
    site = await owner.site()
    publisher_id = (await site.publisher).id
    site_server.pages["/ads.txt"] = Answer(body="\n".join([
        "google.com, pub-0000000000000000, DIRECT, f08c47fec0942fa0",
        ads_txt_line("adnet.test", publisher_id)]), headers={"Content-Type": "text/plain"})
    response = await owner.verify(site.id)
    assert response.status_code == 200
    assert (await response.get_json())["verification"]["method"] == "ads_txt"


async def test_a_redirect_on_the_same_host_is_followed(publisher, site_server):
    owner = await publisher()
    site = await owner.site()
    site_server.home_page_with(site)
    site_server.pages["/home"] = site_server.pages["/"]
    site_server.pages["/"] = Answer(302, headers={"Location": "/home"})
    response = await owner.verify(site.id)
    assert response.status_code == 200 and site_server.requested[:2] == ["/", "/home"]


async def test_without_the_token_the_check_says_what_it_found_and_records_it(publisher, site_server):
    owner, other = await publisher(), await publisher()
    site, others = await owner.site(), await other.site()
    site_server.home_page_with(others)  # another wallet's token proves nothing for this site
    site_server.pages["/.well-known/adnet.txt"] = Answer(body="something else\n")
    response = await owner.verify(site.id)
    assert response.status_code == 400
    body = await response.get_json()
    assert body["error"] == "token_absent" and body["state"] == "unverified"
    assert [(check["method"], check["result"]) for check in body["checks"]] == [
        ("meta_tag", "no adnet meta tag with this site's token"),
        ("well_known", "no line with this site's token"),
        ("ads_txt", "HTTP 404")]
    assert body["checks"][0]["url"] == f"http://{DOMAIN}:{site_server.port}/"
    await site.refresh_from_db()
    assert (site.state, site.verified, site.failed_checks) == (SiteState.UNVERIFIED, False, 0)
    assert site.check_failure.startswith("no proof found: /: no adnet meta tag") and site.last_checked_at
    assert await VerifiedDomain.all().count() == 0


async def test_a_site_that_cannot_be_fetched_is_named_so(publisher, services, site_server):
    owner = await publisher()
    site = await owner.site()
    with serve_site() as closed:
        closed_port = closed.port
    services.site_checks = replace(services.site_checks, fetcher=Fetcher(FetchPolicy.for_environment(
        production=False, port=closed_port)))
    response = await owner.verify(site.id)
    body = await response.get_json()
    assert (response.status_code, body["error"]) == (400, "fetch_failed")
    assert {check["result"] for check in body["checks"]} == {"could not connect to 127.0.0.1"}
    assert (await Site.get(id=site.id)).check_failure.startswith("could not fetch the site")


async def test_proving_the_domain_takes_it_over_from_a_squatter(publisher, site_server):
    squatter, owner = await publisher(), await publisher()
    squatted, site = await squatter.site(), await owner.site()
    site_server.home_page_with(site)
    assert (await owner.verify(site.id)).status_code == 200
    assert await state_of(site) == (SiteState.VERIFIED, True)
    assert await state_of(squatted) == (SiteState.UNVERIFIED, False)
    refused = await squatter.verify(squatted.id)
    assert ((await refused.get_json())["error"], await state_of(squatted)) == (
        "token_absent", (SiteState.UNVERIFIED, False))


async def test_a_holder_that_still_proves_the_domain_keeps_it(publisher, site_server):
    holder, rival = await publisher(), await publisher()
    held, rivals = await holder.site(), await rival.site()
    site_server.home_page_with(held)
    assert (await holder.verify(held.id)).status_code == 200
    site_server.home_page_with(held, rivals)  # both tokens published: the holder still proves it
    response = await rival.verify(rivals.id)
    body = await response.get_json()
    assert (response.status_code, body["error"]) == (409, "domain_taken")
    assert await state_of(held) == (SiteState.VERIFIED, True)
    assert await state_of(rivals) == (SiteState.UNVERIFIED, False)
    assert (await Site.get(id=rivals.id)).check_failure == "another site holds this domain verified and still " \
                                                          "proves it"
    assert (await VerifiedDomain.get(domain=DOMAIN)).site_id == held.id


async def test_a_holder_whose_proof_is_gone_lapses_and_the_prover_takes_the_domain(publisher, site_server):
    old, new = await publisher(), await publisher()
    previous, current = await old.site(), await new.site()
    site_server.home_page_with(previous)
    assert (await old.verify(previous.id)).status_code == 200
    site_server.home_page_with(current)  # the domain changed hands
    response = await new.verify(current.id)
    assert response.status_code == 200
    assert await state_of(current) == (SiteState.VERIFIED, True)
    assert await state_of(previous) == (SiteState.LAPSED, False)
    assert "proof was gone" in (await Site.get(id=previous.id)).check_failure
    assert (await VerifiedDomain.get(domain=DOMAIN)).site_id == current.id
    answer = await (await old.client.get("/api/publishers/sites", query_string={"wallet": old.wallet},
                                         headers=bearer(old.token))).get_json()
    assert answer["sites"][0]["verification"]["state"] == "lapsed"
    back = await old.verify(previous.id)  # and it takes the domain back only by proving it again
    assert (await back.get_json())["error"] == "token_absent"


async def test_of_concurrent_provers_of_one_domain_exactly_one_wins(publisher, site_server):
    provers = [await publisher() for _ in range(8)]
    sites = [await prover.site() for prover in provers]
    site_server.home_page_with(*sites)
    responses = await asyncio.gather(*(prover.verify(site.id) for prover, site in zip(provers, sites, strict=True)))
    statuses = sorted(response.status_code for response in responses)
    assert statuses == [200] + [409] * 7
    assert {(await response.get_json()).get("error") for response in responses if response.status_code == 409} == {
        "domain_taken"}
    assert await VerifiedDomain.all().count() == 1
    assert await Site.filter(verified=True).count() == 1
    assert await Site.filter(state=SiteState.VERIFIED).count() == 1


async def test_the_job_lapses_a_site_after_two_failed_re_checks_in_a_row(publisher, site_server, services, clock):
    owner = await publisher()
    site = await owner.site()
    site_server.home_page_with(site)
    assert (await owner.verify(site.id)).status_code == 200
    site_server.requested.clear()

    assert (await services.jobs.run("site-checks")).checked == 0  # not due yet: nothing fetched
    assert site_server.requested == []

    clock.advance(hours=25)
    kept = await services.jobs.run("site-checks")
    # The proof is on the home page; the re-check also reads ads.txt, for adnet's line (tests/api/test_ads_txt.py).
    assert (kept.checked, kept.kept) == (1, 1) and site_server.requested == ["/", "/ads.txt"]
    await site.refresh_from_db()
    assert site.last_checked_at == clock.now() and site.verified

    site_server.pages.clear()  # the proof is gone
    clock.advance(hours=25)
    first = await services.jobs.run("site-checks")
    assert (first.failed, first.lapsed) == (1, 0)
    await site.refresh_from_db()
    assert (site.verified, site.state, site.failed_checks) == (True, SiteState.VERIFIED, 1)
    assert site.check_failure.startswith("no proof found")

    clock.advance(minutes=30)  # the retry waits an hour
    assert (await services.jobs.run("site-checks")).checked == 0
    changed: list[frozenset[str] | None] = []
    changes.listen(changed.append)
    clock.advance(minutes=31)
    second = await services.jobs.run("site-checks")
    assert (second.failed, second.lapsed) == (1, 1)
    assert await state_of(site) == (SiteState.LAPSED, False)
    assert await VerifiedDomain.all().count() == 0
    assert changed == [{site.id}]
    clock.advance(hours=48)
    assert (await services.jobs.run("site-checks")).checked == 0  # lapsed sites are not re-checked


async def test_one_transient_failure_is_forgiven(publisher, site_server, services, clock):
    owner = await publisher()
    site = await owner.site()
    site_server.home_page_with(site)
    assert (await owner.verify(site.id)).status_code == 200
    home = site_server.pages.pop("/")
    clock.advance(hours=25)
    assert (await services.jobs.run("site-checks")).failed == 1
    site_server.pages["/"] = home
    clock.advance(hours=2)
    assert (await services.jobs.run("site-checks")).kept == 1
    await site.refresh_from_db()
    assert (site.verified, site.failed_checks, site.check_failure) == (True, 0, "")


async def test_the_re_check_job_takes_a_bounded_batch_of_the_oldest_checks(services, site_server, clock):
    # Verified sites on addresses where nothing listens: each check fails at once.
    sites = [await make_site(domain=f"127.0.0.{index + 2}", now=clock.now() - timedelta(days=2)) for index in range(3)]
    for index, site in enumerate(sites):
        await Site.filter(id=site.id).update(last_checked_at=clock.now() - timedelta(days=2, hours=index))
    report = await services.site_checks.recheck_due(clock.now(), limit=2)
    assert report.checked == 2
    checked = {site.id for site in await Site.filter(last_checked_at=clock.now())}
    assert checked == {sites[1].id, sites[2].id}  # the two oldest checks


async def test_the_verify_route_needs_the_owners_session(publisher, client):
    owner, stranger = await publisher(), await publisher()
    site = await owner.site()
    anonymous = await client.post(f"/api/publishers/sites/{site.id}/verify", json={"wallet": owner.wallet})
    assert (anonymous.status_code, (await anonymous.get_json())["error"]) == (401, "auth_required")
    other_wallet = await client.post(f"/api/publishers/sites/{site.id}/verify", json={"wallet": owner.wallet},
                                     headers=bearer(stranger.token))
    assert (other_wallet.status_code, (await other_wallet.get_json())["field"]) == (403, "wallet")
    not_theirs = await stranger.verify(site.id)
    assert (not_theirs.status_code, (await not_theirs.get_json())["field"]) == (403, "siteId")
    unknown = await owner.verify("site_doesNotExist0000000")
    assert (unknown.status_code, (await unknown.get_json())["error"]) == (404, "not_found")
    assert await state_of(site) == (SiteState.UNVERIFIED, False)
