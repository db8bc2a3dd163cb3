"""Who asks, as tracking sees it: bots by their own User-Agent header, networks instead of addresses, and the
binding a token carries."""

import ipaddress

import pytest

from adnet.delivery.clients import Client, agent_family, is_bot, network

CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"


@pytest.mark.parametrize(("user_agent", "bot"), [
    (CHROME, False),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Version/17.0 Mobile/15E148 Safari/604.1", False),
    ("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", True),
    ("Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", True),
    ("Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/120.0.0.0 Safari/537.36", True),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36 "
     "Puppeteer", True),
    ("curl/8.5.0", True),
    ("python-requests/2.32.3", True),
    ("Go-http-client/1.1", True),
    ("", True),
    ("   ", True),
])
def test_bots_are_named_by_their_user_agent(user_agent, bot):
    assert is_bot(user_agent) is bot


@pytest.mark.parametrize(("address", "kept"), [
    ("203.0.113.7", "203.0.113.0/24"),
    ("203.0.113.250", "203.0.113.0/24"),
    ("2001:db8:1:2::7", "2001:db8:1::/48"),
    ("::ffff:198.51.100.9", "198.51.100.0/24"),
    ("255.255.255.255", "255.255.255.0/24"),
    ("256.1.1.1", "unknown"),
    ("01.2.3.4", "unknown"),  # leading zeros are no IPv4 octet
    ("1.2.3", "unknown"),
    ("1.2.3.4.5", "unknown"),
    ("not an address", "unknown"),
    ("", "unknown"),
])
def test_only_the_network_of_an_address_is_kept(address, kept):
    assert network(address) == kept


def test_a_binding_follows_the_network_and_the_browser_family_not_the_version():
    newer = CHROME.replace("Chrome/131.0", "Chrome/132.0")
    firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0"
    assert (agent_family(CHROME), agent_family(firefox)) == ("Chrome", "Firefox")
    same = Client("203.0.113.7", CHROME).binding
    assert Client("203.0.113.99", newer).binding == same  # same /24, same family
    assert Client("203.0.114.7", CHROME).binding != same
    assert Client("203.0.113.7", firefox).binding != same


@pytest.mark.parametrize("address", ["0.0.0.1", "255.255.255.255", "10.1.2.3", "256.1.1.1", "01.2.3.4", "1.2.3",
                                     "1.2.3.4.5", "1.2.3.x", "", "::ffff:10.1.2.3", "2001:db8::1", " 1.2.3.4"])
def test_the_dotted_quad_fast_path_agrees_with_ipaddress(address):
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        expected = "unknown"
    else:
        parsed = parsed.ipv4_mapped or parsed if isinstance(parsed, ipaddress.IPv6Address) else parsed
        expected = str(ipaddress.ip_network(f"{parsed}/{24 if parsed.version == 4 else 48}", strict=False))
    assert network(address) == expected
