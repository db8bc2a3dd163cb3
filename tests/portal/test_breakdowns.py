"""Breakdowns in the portal: the advertiser's page and the site's, by each dimension, as a whole page and as the
fragment htmx swaps, their CSV, a bad range explained beside the form, and other wallets' sites refused."""

from __future__ import annotations

import csv
import io
import re

from adnet.delivery.models import ReportDaily
from tests.factories import G, make_advertiser, make_campaign, make_publisher, make_site

# (site index, placement, country, device, impressions, clicks, cost)
ROWS = [(0, "top", "DE", "desktop", 40, 2, 8 * G), (0, "side", "FR", "mobile", 10, 1, 3 * G),
        (1, "top", "", "tablet", 5, 0, G)]


def text_of(html: str) -> str:
    """The page with no white space between tags, as rows read."""
    return re.sub(r">\s+<", "><", html)


async def billed(wallet: str, clock):
    """A campaign of ``wallet``'s advertiser account billed on two sites of ``wallet``'s publisher account."""
    campaign = await make_campaign(await make_advertiser(wallet), name="Spring sale")
    publisher = await make_publisher(wallet)
    sites = [await make_site(publisher, domain=f"news{number}.example") for number in range(2)]
    for site_index, placement, country, device, impressions, clicks, cost in ROWS:
        await ReportDaily.create(day=clock.today(), campaign=campaign, site=sites[site_index], placement=placement,
                                 country=country, device=device, impressions=impressions, clicks=clicks, cost=cost,
                                 publisher_amount=cost * 7 // 10)
    return campaign, sites


async def test_the_advertiser_sees_spend_by_site_and_country(publisher, clock):
    campaign, _ = await billed(publisher.wallet, clock)
    html = text_of(await (await publisher.get("/portal/advertise/breakdown")).get_data(as_text=True))
    assert "<h1>Where your campaigns ran</h1>" in html and 'id="breakdown-form"' in html
    assert '<th scope="row">news0.example</th><td>50</td><td>3</td><td>6.00 %</td><td>11</td>' in html
    assert '<tr id="breakdown-total"><th scope="row">Total</th><td>55</td>' in html
    assert f'<option value="{campaign.id}">Spring sale</option>' in html

    fragment = await publisher.get(f"/portal/advertise/breakdown?by=country&campaignId={campaign.id}", htmx=True)
    html = text_of(await fragment.get_data(as_text=True))
    assert html.lstrip().startswith('<section id="breakdown"') and "<html" not in html
    assert '<th scope="row">DE</th><td>40</td>' in html and '<th scope="row">unknown</th><td>5</td>' in html
    assert f'<option value="{campaign.id}" selected>' in html
    # The URL htmx pushed, restored from the server when htmx no longer holds it: the whole page.
    restored = await publisher.client.get(f"/portal/advertise/breakdown?by=country&campaignId={campaign.id}",
                                          headers={"HX-Request": "true", "HX-History-Restore-Request": "true"})
    assert "<h1>Where your campaigns ran</h1>" in await restored.get_data(as_text=True)


async def test_the_csv_says_what_the_page_says(publisher, clock):
    _, sites = await billed(publisher.wallet, clock)
    response = await publisher.get(f"/portal/sites/{sites[0].id}/breakdown.csv?by=device")
    assert response.mimetype == "text/csv" and response.headers["Cache-Control"] == "no-store"
    lines = list(csv.reader(io.StringIO(await response.get_data(as_text=True))))
    assert lines == [["device", "impressions", "clicks", "ctr", "earned", "conversions"],
                     ["desktop", "40", "2", "0.050000", "5.6", "0"], ["mobile", "10", "1", "0.100000", "2.1", "0"],
                     ["total", "50", "3", "0.060000", "7.7", "0"]]
    advertiser = await publisher.get("/portal/advertise/breakdown.csv?by=placement")
    lines = list(csv.reader(io.StringIO(await advertiser.get_data(as_text=True))))
    assert lines[1:] == [["top", "45", "2", "0.044444", "9", "0", "0.000000", "0", "0", ""],
                         ["side", "10", "1", "0.100000", "3", "0", "0.000000", "0", "0", ""],
                         ["total", "55", "3", "0.054545", "12", "0", "0.000000", "0", "0", ""]]


async def test_the_site_page_links_its_earnings_by_placement(publisher, clock):
    _, sites = await billed(publisher.wallet, clock)
    site_page = await (await publisher.get(f"/portal/sites/{sites[0].id}/traffic")).get_data(as_text=True)
    assert f'href="/portal/sites/{sites[0].id}/breakdown"' in site_page
    html = text_of(await (await publisher.get(f"/portal/sites/{sites[0].id}/breakdown")).get_data(as_text=True))
    assert "Earnings on news0.example" in html and "Earned (G$)" in html
    assert '<th scope="row">top</th><td>40</td><td>2</td><td>5.00 %</td><td>5.6</td>' in html
    assert '<option value="site"' not in html


async def test_a_bad_range_is_explained_beside_the_form(publisher, clock):
    _, sites = await billed(publisher.wallet, clock)
    response = await publisher.get(f"/portal/sites/{sites[0].id}/breakdown?from=2025-01-01&to=2025-12-31",
                                   htmx=True)
    html = text_of(await response.get_data(as_text=True))
    assert response.status_code == 400 and 'id="breakdown-error"' in html and "at most 92 days" in html
    assert 'id="breakdown-from" name="from" value="2025-01-01"' in html and 'aria-invalid="true"' in html
    assert '<th scope="row">top</th>' in html  # the last 30 days meanwhile


async def test_another_wallets_site_is_refused(publisher, clock):
    stranger = await make_site(await make_publisher())
    for path in (f"/portal/sites/{stranger.id}/breakdown", f"/portal/sites/{stranger.id}/breakdown.csv"):
        assert (await publisher.get(path)).status_code == 403
