"""Publisher rules without HTTP: one canonical form per domain, one publisher per wallet under concurrency,
ownership of sites, and earnings that count ad revenue only."""

from __future__ import annotations

import asyncio

import pytest
from tortoise.transactions import in_transaction

from adnet import ledger
from adnet.errors import ApiError
from adnet.models import Publisher, Site
from adnet.publishers import NOT_EARNINGS, list_sites, normalize_domain, owned_site, register_site, site_balance
from tests.factories import G, fund, make_site, wallet_address

CANONICAL = {
    "example.com": "example.com",
    "EXAMPLE.COM": "example.com",
    " https://www.example.com/path?q=1#top ": "example.com",
    "http://example.com:8080": "example.com",
    "www.www.example.com": "www.example.com",  # only one leading www. is a prefix
    "example.com.": "example.com",
    "sub.Example.co.uk/": "sub.example.co.uk",
    "münchen.de": "xn--mnchen-3ya.de",
    "MÜNCHEN.DE": "xn--mnchen-3ya.de",
    "\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com": "example.com",  # full-width letters map to ASCII (UTS 46)
    "faß.de": "xn--fa-hia.de",  # IDNA 2008: ß is kept, not mapped to ss
}
REFUSED = ["", "   ", "com", "http://", "mailto:someone@example.com", "https://user:pw@example.com",
           "192.168.0.1", "exa_mple.com", "example..com", "-example.com", "example-.com", "a" * 250 + ".com",
           "☃", 12345, None]


@pytest.mark.parametrize(("raw", "expected"), CANONICAL.items())
def test_domains_have_one_canonical_form(raw, expected):
    assert normalize_domain(raw) == expected


@pytest.mark.parametrize("raw", REFUSED)
def test_what_is_no_public_dns_name_is_refused(raw):
    with pytest.raises(ApiError) as refused:
        normalize_domain(raw)
    assert (refused.value.status, refused.value.code, refused.value.extra["field"]) == (400, "invalid_domain",
                                                                                          "domain")


async def test_concurrent_first_registrations_of_a_wallet_make_one_publisher(app, clock):
    wallet = wallet_address()
    registrations = await asyncio.gather(*(
        register_site(wallet=wallet, domain=f"site{index}.example", name="", now=clock.now()) for index in range(10)
    ))
    assert {registration.publisher.id for registration in registrations} == {(await Publisher.get()).id}
    assert all(registration.created for registration in registrations)
    assert await Site.all().count() == 10


async def test_a_refused_registration_leaves_no_publisher_behind(app, clock):
    await register_site(wallet=wallet_address(), domain="taken.example", name="", now=clock.now())
    with pytest.raises(ApiError) as refused:
        await register_site(wallet=wallet_address(), domain="www.taken.example", name="", now=clock.now())
    assert (refused.value.status, refused.value.code) == (409, "domain_taken")
    assert await Publisher.all().count() == 1


async def test_a_site_belongs_to_its_publishers_wallet_only(app):
    site = await make_site()
    owner = (await site.publisher).wallet
    assert (await owned_site(owner, site.id)).id == site.id
    with pytest.raises(ApiError) as stranger:
        await owned_site(wallet_address(), site.id)
    assert (stranger.value.status, stranger.value.code) == (403, "not_owner")
    for unknown in ("site_doesnotexist12345", "pub_x", None):
        with pytest.raises(ApiError) as missing:
            await owned_site(owner, unknown)
        assert missing.value.status == 404


async def test_earned_counts_revenue_and_not_the_money_that_only_moves(app, clock):
    site = await make_site()
    owner = (await site.publisher).wallet
    await fund(ledger.site(site.id), 6 * G)  # revenue (any kind but the movements below)
    async with in_transaction():
        await ledger.book("deposit", "0x" + "aa" * 32, [(ledger.external("G$"), -5 * G), (ledger.site(site.id), 5 * G)],
                          now=clock.now())
    async with in_transaction():
        await ledger.book("exchange", "ex_test", [(ledger.site(site.id), -G), (ledger.external("G$"), G)],
                          now=clock.now())
    assert "deposit" in NOT_EARNINGS and "exchange" in NOT_EARNINGS
    money = await site_balance(owner, site.id)
    assert (money.earned, money.claimable) == (6 * G, 10 * G)
    [summary] = await list_sites(owner, clock.now())
    assert (summary.lifetime.earned, summary.today.earned) == (6 * G, 6 * G)
    assert await list_sites(wallet_address(), clock.now()) == []
