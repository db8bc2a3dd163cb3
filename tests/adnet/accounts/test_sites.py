"""Publisher rules without HTTP: one canonical form per domain, special-use names refused in production only,
one publisher per wallet under concurrency, registrations that never block another wallet, and ownership of
sites."""

from __future__ import annotations

import asyncio

import pytest

from adnet.accounts.commands import DomainCheck, SiteRegistration
from adnet.accounts.models import Publisher, Site
from adnet.accounts.sites import check_registrable, owned_site, register_site
from adnet.core.errors import DomainError, Forbidden, Invalid, NotFound
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
    # Accepted by the syntax for development; refused in production (``special_use``).
    "localhost": "localhost",
    "http://LOCALHOST:3000/": "localhost",
    "192.168.0.1": "192.168.0.1",
    "http://127.0.0.1:8000/demo": "127.0.0.1",
    "[::1]": "::1",
    "https://[2001:DB8:0:0::1]:8443/": "2001:db8::1",
}
REFUSED = ["", "   ", "com", "http://", "mailto:someone@example.com", "https://user:pw@example.com",
           "exa_mple.com", "example..com", "-example.com", "example-.com", "a" * 250 + ".com", "1.2.3", "0x7f.1",
           "http://[::1", "☃", 12345, None]
SPECIAL_USE = {"localhost": "reserved_domain", "a.localhost": "reserved_domain", "news.test": "reserved_domain",
               "x.invalid": "reserved_domain", "site.example": "reserved_domain", "nas.home.arpa": "reserved_domain",
               "printer.local": "reserved_domain", "abc.onion": "reserved_domain", "db.internal": "reserved_domain",
               "localhost.localdomain": "reserved_domain", "1.0.0.127.in-addr.arpa": "reserved_domain",
               "arpa": "reserved_domain", "example.com": "reserved_domain", "www2.example.org": "reserved_domain",
               "x.alt": "reserved_domain", "ipv4only.arpa": "reserved_domain", "printer.lan": "reserved_domain",
               "10.0.0.1": "ip_address_domain", "::1": "ip_address_domain"}
PUBLIC = ["newsroom.io", "test.newsroom.io", "localhost.newsroom.io", "example.co.uk", "myexample.com", "testing.io",
          "local.news", "arpa.io", "localdomain.com", "alt.org", "home.example.co"]


@pytest.mark.parametrize(("raw", "expected"), CANONICAL.items())
def test_domains_have_one_canonical_form(raw, expected):
    assert parse(DomainCheck, {"domain": raw}).domain == expected


@pytest.mark.parametrize("raw", REFUSED)
def test_what_is_no_public_dns_name_is_refused(raw):
    with pytest.raises(DomainError) as refused:
        parse(DomainCheck, {"domain": raw})
    assert (type(refused.value), refused.value.code, refused.value.field) == (Invalid, "invalid_domain", "domain")


@pytest.mark.parametrize(("domain", "code"), SPECIAL_USE.items())
def test_names_no_one_owns_publicly_are_refused_in_production_only(domain, code):
    with pytest.raises(DomainError) as refused:
        check_registrable(domain, allow_special_names=False)
    assert (type(refused.value), refused.value.code, refused.value.field) == (Invalid, code, "domain")
    check_registrable(domain, allow_special_names=True)


@pytest.mark.parametrize("domain", PUBLIC)
def test_public_names_are_registrable_everywhere(domain):
    check_registrable(domain, allow_special_names=False)


async def test_concurrent_first_registrations_of_a_wallet_make_one_publisher(app, clock):
    wallet = wallet_address()
    registrations = await asyncio.gather(*(
        register_site(wallet, SiteRegistration(domain=f"site{index}.example"), clock.now(), allow_special_names=True)
        for index in range(10)
    ))
    assert {registration.publisher.id for registration in registrations} == {(await Publisher.get()).id}
    assert all(registration.created for registration in registrations)
    assert await Site.all().count() == 10


async def test_a_refused_registration_leaves_no_publisher_behind(app, clock):
    with pytest.raises(DomainError) as refused:
        await register_site(wallet_address(), SiteRegistration(domain="news.test"), clock.now(),
                            allow_special_names=False)
    assert (type(refused.value), refused.value.code) == (Invalid, "reserved_domain")
    assert await Publisher.all().count() == 0 and await Site.all().count() == 0


async def test_a_domain_another_wallet_registered_or_verified_is_still_registrable(app, clock):
    holder = await make_site(domain="taken.newsroom.io")
    assert holder.verified
    registrations = await asyncio.gather(*(
        register_site(wallet, SiteRegistration(domain="www.TAKEN.newsroom.io"), clock.now(), allow_special_names=False)
        for wallet in [wallet_address() for _ in range(5)] * 2))
    assert sum(registration.created for registration in registrations) == 5
    assert len({registration.site.id for registration in registrations}) == 5
    assert all(not registration.site.verified for registration in registrations)
    assert await Site.filter(domain="taken.newsroom.io").count() == 6


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
