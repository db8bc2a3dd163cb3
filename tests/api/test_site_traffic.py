"""What a site's owner learns of its traffic: per UTC day, recorded and billed events, earnings, and the events each
named reason kept from billing, through GET /api/publishers/sites/{siteId}/traffic and its CSV."""

from __future__ import annotations

import csv
import io

from eth_account import Account

from adnet.core.amounts import to_decimal_string
from adnet.delivery import tracking
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.api.test_track import BROWSER, CPM, event_body, post, served_and_seen, setup_ad
from tests.auth_helpers import bearer, sign_in
from tests.factories import make_site


async def traffic_of_a_site(client, clock) -> tuple[str, str, object]:
    """A signed-in owner's site with one billed impression, one from a scripted client and one from another
    page; the owner's token, its wallet and the site."""
    site, _, _ = await setup_ad()
    owner = Account.create()
    await site.fetch_related("publisher")
    site.publisher.wallet = owner.address.lower()
    await site.publisher.save()
    token = await sign_in(client, owner)
    ads = [await served_and_seen(client, clock, site) for _ in range(3)]
    await post(client, event_body(ads[0], site, fingerprint="fp-human"))
    await post(client, event_body(ads[1], site, fingerprint="fp-script", userAgent=BROWSER),
               **{"User-Agent": "python-requests/2.31"})
    await post(client, event_body(ads[2], site, fingerprint="fp-elsewhere"), Origin="https://elsewhere.example")
    return token, owner.address, site


async def test_the_owner_sees_each_day_billed_and_filtered_by_reason(client, clock):
    token, _, site = await traffic_of_a_site(client, clock)
    response = await client.get(f"/api/publishers/sites/{site.id}/traffic", headers=bearer(token))
    assert response.status_code == 200
    report = await response.get_json()
    today = report["days"][-1]
    price = CPM // 1000
    assert (today["day"], today["impressions"], today["billedImpressions"]) == (clock.today().isoformat(), 3, 1)
    assert today["earned"] == report["totals"]["earned"] == to_decimal_string(price * 7000 // 10_000)
    assert today["filtered"] == report["totals"]["filtered"] == {"bot_user_agent": 1, "domain_mismatch": 1}
    assert list(today["filtered"]) == ["bot_user_agent", "domain_mismatch"]  # in the order reasons are decided
    assert len(report["days"]) == 30 and report["from"] < report["to"] == clock.today().isoformat()

    csv_response = await client.get(f"/api/publishers/sites/{site.id}/traffic.csv", headers=bearer(token))
    assert csv_response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(await csv_response.get_data(as_text=True))))
    assert {name for name in rows[0] if name.startswith("filtered:")} == {f"filtered:{r}" for r in tracking.REASONS}
    for row in (rows[-2], rows[-1]):
        assert (row["impressions"], row["billed_impressions"], row["filtered:bot_user_agent"],
                row["filtered:domain_mismatch"], row["filtered:client_rate_exceeded"]) == ("3", "1", "1", "1", "0")
    assert rows[-1]["day"] == "total"


async def test_only_the_owner_reads_a_sites_traffic(client, clock):
    token, _, site = await traffic_of_a_site(client, clock)
    stranger = await sign_in(client, Account.create())
    for path in (f"/api/publishers/sites/{site.id}/traffic", f"/api/publishers/sites/{site.id}/traffic.csv"):
        assert (await client.get(path)).status_code == 401
        refused = await client.get(path, headers=bearer(stranger))
        assert refused.status_code == 403 and (await refused.get_json())["error"] == "not_owner"
    unknown = await client.get(f"/api/publishers/sites/{(await make_site()).id}x/traffic", headers=bearer(token))
    assert unknown.status_code == 404
    bad_range = await client.get(f"/api/publishers/sites/{site.id}/traffic", query_string={"from": "2026-13-01"},
                                 headers=bearer(token))
    assert bad_range.status_code == 400 and (await bad_range.get_json())["field"] == "from"
