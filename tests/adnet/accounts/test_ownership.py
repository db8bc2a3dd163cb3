"""Site ownership without HTTP: who holds a domain is decided by the database, every change of a site's
verification is announced to the serving index, a site proving a domain it holds keeps it quietly, and demo
sites are exempt from re-checks outside production only."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from adnet.accounts.fetching import Fetcher, FetchPolicy
from adnet.accounts.models import ProofMethod, Site, SiteState, VerifiedDomain
from adnet.accounts.ownership import SiteChecks, mark_verified
from adnet.core import changes
from adnet.core.errors import Conflict, DomainError, Invalid
from tests.factories import make_site
from tests.site_server import DOMAIN


@pytest.fixture
def checks(site_server) -> SiteChecks:
    return SiteChecks(fetcher=Fetcher(FetchPolicy.for_environment(production=False, port=site_server.port)),
                      ads_system="adnet.test", recheck_every=timedelta(hours=24),
                      exempt=frozenset({ProofMethod.DEMO}))


@pytest.fixture
def announced():
    """The announcements made from now on in this test's context."""
    heard: list[frozenset[str] | None] = []
    changes.listen(heard.append)
    return heard


async def test_every_change_of_verification_is_announced_and_nothing_else(app, checks, site_server, clock,
                                                                         announced):
    first = await make_site(domain=DOMAIN, verified=False)
    second = await make_site(domain=DOMAIN, verified=False)
    site_server.home_page_with(first)

    await checks.verify(first, clock.now())
    assert announced == [{first.id}]
    await checks.verify(await Site.get(id=first.id), clock.now())  # proving a domain it holds changes nothing
    with pytest.raises(DomainError):
        await checks.verify(second, clock.now())  # a failed check of an unverified site changes nothing
    assert announced == [{first.id}]

    site_server.home_page_with(second)
    taken = await checks.verify(second, clock.now())
    assert taken.verified and announced == [{first.id}, {first.id}, {second.id}]  # the holder lapsed, the prover took
    # the domain
    assert (await Site.get(id=first.id)).state is SiteState.LAPSED


async def test_a_failed_check_by_the_owner_counts_towards_lapsing(app, checks, site_server, clock):
    site = await make_site(domain=DOMAIN, verified=False)
    site_server.home_page_with(site)
    site = await checks.verify(site, clock.now())
    site_server.pages.clear()
    for expected in (SiteState.VERIFIED, SiteState.LAPSED):
        with pytest.raises(Invalid) as refused:
            await checks.verify(await Site.get(id=site.id), clock.now())
        assert (refused.value.code, refused.value.details["state"]) == ("token_absent", expected.value)
    assert await VerifiedDomain.filter(domain=DOMAIN).count() == 0


async def test_marking_a_site_verified_never_takes_a_held_domain(app, clock):
    holder = await make_site(domain="news.example.com")
    other = await make_site(domain="news.example.com", verified=False)
    with pytest.raises(Conflict) as refused:
        await mark_verified(other, ProofMethod.DEMO, clock.now())
    assert refused.value.code == "domain_taken"
    assert (await VerifiedDomain.get(domain="news.example.com")).site_id == holder.id
    assert not (await Site.get(id=other.id)).verified


async def test_demo_sites_are_re_checked_in_production_only(app, checks, clock):
    demo = await make_site(domain="127.0.0.9", verified=False)
    await mark_verified(demo, ProofMethod.DEMO, clock.now() - timedelta(days=3))
    assert (await checks.recheck_due(clock.now())).checked == 0
    production = SiteChecks(fetcher=checks.fetcher, ads_system="adnet.test", recheck_every=timedelta(hours=24))
    assert (await production.recheck_due(clock.now())).checked == 1


async def test_processes_re_checking_at_once_check_each_site_once(app, checks, site_server, clock):
    site = await make_site(domain=DOMAIN, verified=False)
    site_server.home_page_with(site)
    await checks.verify(site, clock.now() - timedelta(days=2))
    site_server.requested.clear()
    reports = await asyncio.gather(*(checks.recheck_due(clock.now()) for _ in range(5)))
    assert sum(report.checked for report in reports) == 1
    assert site_server.requested == ["/", "/ads.txt"]  # its proof, then adnet's ads.txt line, once
