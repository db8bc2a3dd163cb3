"""Publisher rules without HTTP: one canonical form per domain, one publisher per wallet under concurrency, and
ownership of sites."""

from __future__ import annotations

import asyncio

import pytest

from adnet.accounts.commands import DomainCheck, SiteRegistration
from adnet.accounts.models import Publisher, Site
from adnet.accounts.sites import owned_site, register_site
from adnet.core.errors import Conflict, DomainError, Forbidden, Invalid, NotFound
from adnet.core.inputs import parse
from tests.factories import make_site, wallet_address

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
    assert parse(DomainCheck, {"domain": raw}).domain == expected


@pytest.mark.parametrize("raw", REFUSED)
def test_what_is_no_public_dns_name_is_refused(raw):
    with pytest.raises(DomainError) as refused:
        parse(DomainCheck, {"domain": raw})
    assert (type(refused.value), refused.value.code, refused.value.field) == (Invalid, "invalid_domain", "domain")


async def test_concurrent_first_registrations_of_a_wallet_make_one_publisher(app, clock):
    wallet = wallet_address()
    registrations = await asyncio.gather(*(
        register_site(wallet, SiteRegistration(domain=f"site{index}.example"), clock.now()) for index in range(10)
    ))
    assert {registration.publisher.id for registration in registrations} == {(await Publisher.get()).id}
    assert all(registration.created for registration in registrations)
    assert await Site.all().count() == 10


async def test_a_refused_registration_leaves_no_publisher_behind(app, clock):
    await register_site(wallet_address(), SiteRegistration(domain="taken.example"), clock.now())
    with pytest.raises(DomainError) as refused:
        await register_site(wallet_address(), SiteRegistration(domain="www.taken.example"), clock.now())
    assert (type(refused.value), refused.value.code) == (Conflict, "domain_taken")
    assert await Publisher.all().count() == 1


async def test_a_site_belongs_to_its_publishers_wallet_only(app):
    site = await make_site()
    owner = (await site.publisher).wallet
    assert (await owned_site(owner, site.id)).id == site.id
    with pytest.raises(DomainError) as stranger:
        await owned_site(wallet_address(), site.id)
    assert (type(stranger.value), stranger.value.code) == (Forbidden, "not_owner")
    for unknown in ("site_doesnotexist12345", "pub_x", None):
        with pytest.raises(DomainError) as missing:
            await owned_site(owner, unknown)
        assert isinstance(missing.value, NotFound)
