"""Whose page asks: the page's host from Origin or Referer, compared with a site's domain and its subdomains."""

from adnet.delivery.sites import SiteEntry, host_of, on_domain, on_site, page_host

SITE = SiteEntry("site_1", "example.com", verified=True)


def test_the_page_host_comes_from_origin_then_referer():
    assert page_host("https://News.Example.com:8443", "https://elsewhere.test/a") == "news.example.com"
    assert page_host(None, "https://www.example.com/article?x=1") == "example.com"
    assert page_host("null", "https://example.com/") == "example.com"
    assert page_host(None, None) is None
    assert page_host("not a url", None) is None
    assert host_of("https://bücher.example/") == "xn--bcher-kva.example"


def test_a_page_is_on_the_domain_or_a_subdomain_only():
    assert on_domain("example.com", "example.com")
    assert on_domain("blog.example.com", "example.com")
    assert not on_domain("example.com.evil.test", "example.com")
    assert not on_domain("notexample.com", "example.com")
    assert not on_domain(None, "example.com")


def test_origin_and_page_url_must_both_be_the_sites():
    assert on_site(SITE, origin="https://example.com", referer=None, page_url="https://blog.example.com/post")
    assert on_site(SITE, origin=None, referer="https://example.com/", page_url=None)
    assert not on_site(SITE, origin="https://elsewhere.example", referer=None, page_url="https://example.com/")
    assert not on_site(SITE, origin="https://example.com", referer=None, page_url="https://elsewhere.example/")
    assert not on_site(SITE, origin=None, referer=None, page_url="https://example.com/")  # a script names no page
