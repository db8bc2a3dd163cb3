"""ads.txt for publishers through HTTP: every site answer carries the exact line that authorises adnet (adnet's
ads-system domain, the publisher id, DIRECT, and the certification authority id when one is configured), and the
re-check job reads the site's real /ads.txt (a server on 127.0.0.1) and records whether the line is there and
when, which the site list then shows."""

from __future__ import annotations

import pytest
from eth_account import Account

from adnet.accounts.models import Site
from tests.auth_helpers import bearer, sign_in
from tests.conftest import make_settings
from tests.site_server import DOMAIN, Answer

CERTIFICATION_ID = "f08c47fec0942fa0"


@pytest.fixture
def settings(database_url, data_dir, site_server):
    """Checks fetch from the test's site server; adnet names itself ads.adnet.example, with a TAG-ID."""
    return make_settings(database_url, data_dir, ADNET_SITE_CHECK_PORT=str(site_server.port),
                         ADNET_ADS_SYSTEM_DOMAIN="Ads.Adnet.Example", ADNET_ADS_TXT_CERTIFICATION_ID=CERTIFICATION_ID)


async def signed_in(client):
    account = Account.create()
    return account, await sign_in(client, account)


async def listed_site(client, account) -> dict:
    """The wallet's first site as the site list answers it (signed in afresh: a day may have passed)."""
    token = await sign_in(client, account)
    body = await (await client.get("/api/publishers/sites", query_string={"wallet": account.address},
                                   headers=bearer(token))).get_json()
    return body["sites"][0]


async def test_each_site_answer_carries_the_exact_ads_txt_line(client):
    account, token = await signed_in(client)
    wallet = account.address
    registered = await (await client.post("/api/publishers/register", json={"wallet": wallet, "domain": "news.example"},
                                          headers=bearer(token))).get_json()
    line = f"ads.adnet.example, {registered['publisherId']}, DIRECT, {CERTIFICATION_ID}"
    assert registered["adsTxt"] == {"line": line, "location": "https://news.example/ads.txt", "listed": None,
                                    "checkedAt": None}
    assert (await listed_site(client, account))["adsTxt"] == registered["adsTxt"]
    # The same line proves the domain.
    assert registered["verification"]["instructions"][2]["text"] == line


async def test_the_re_check_records_whether_ads_txt_carries_the_line(client, site_server, services, clock):
    account, token = await signed_in(client)
    wallet = account.address
    registered = await (await client.post("/api/publishers/register", json={"wallet": wallet, "domain": DOMAIN},
                                          headers=bearer(token))).get_json()
    site = await Site.get(id=registered["siteId"])
    site_server.home_page_with(site)  # proven by its meta tag, so the owner's check stops before ads.txt
    verified = await client.post(f"/api/publishers/sites/{site.id}/verify", json={"wallet": wallet},
                                 headers=bearer(token))
    assert verified.status_code == 200 and (await verified.get_json())["adsTxt"]["listed"] is None

    site_server.pages["/ads.txt"] = Answer(body="# ads.txt of the site\ncontact=ads@news.example\n"
                                                "google.com, pub-1, DIRECT, f08c47fec0942fa0\n"
                                                "ads.adnet.example, pub_someoneElse, DIRECT\n"
                                                f"ads.adnet.example, {registered['publisherId']}, RESELLER\n",
                                           headers={"Content-Type": "text/plain"})
    clock.advance(hours=25)
    assert (await services.jobs.run("site-checks")).kept == 1
    missing = (await listed_site(client, account))["adsTxt"]
    assert missing["listed"] is False
    assert missing["checkedAt"] == clock.now().isoformat().replace("+00:00", "Z")

    site_server.pages["/ads.txt"].body += f"  ADS.ADNET.EXAMPLE ,{registered['publisherId']}, direct # adnet\n"
    clock.advance(hours=25)
    assert (await services.jobs.run("site-checks")).kept == 1
    present = (await listed_site(client, account))["adsTxt"]
    assert present["listed"] is True and present["checkedAt"] == clock.now().isoformat().replace("+00:00", "Z")

    del site_server.pages["/ads.txt"]  # a 404 is no line
    clock.advance(hours=25)
    assert (await services.jobs.run("site-checks")).kept == 1
    assert (await listed_site(client, account))["adsTxt"]["listed"] is False
    assert site_server.requested.count("/ads.txt") == 3
