"""The dashboard's figures through HTTP, the units answered on a site, and the CSV export of its events."""

from __future__ import annotations

import csv
import io
import re
from datetime import timedelta
from decimal import Decimal

from tortoise.transactions import in_transaction

from adnet.core.ids import new_id
from adnet.delivery.models import EventType, SiteDailyStat, TrackingEvent
from adnet.interactions.models import Interaction
from adnet.money import ledger
from adnet.tasks.config import config_json
from adnet.tasks.models import TaskKind
from tests.factories import G, make_campaign, make_creative, make_publisher, make_site, make_task


async def earn(site_id: str, amount: int, when) -> None:
    """Ad revenue as billing books it: from a campaign's budget to the site."""
    async with in_transaction():
        await ledger.book("ad_billing", new_id("ltx"), [(ledger.external("G$"), -amount),
                                                        (ledger.site(site_id), amount)], now=when)


async def test_the_dashboard_shows_today_30_days_lifetime_chart_and_fill_rate(publisher, clock):
    now = clock.now()
    site = await make_site(await make_publisher(publisher.wallet), domain="figures.example")
    today, old = now.date(), now.date() - timedelta(days=40)
    await SiteDailyStat.create(site=site, day=today, requests=10, filled=8, impressions=200, clicks=5)
    await SiteDailyStat.create(site=site, day=today - timedelta(days=3), requests=10, filled=2, impressions=100,
                               clicks=1)
    await SiteDailyStat.create(site=site, day=old, requests=50, filled=50, impressions=1000, clicks=100)
    await earn(site.id, G, now)
    await earn(site.id, 2 * G, now - timedelta(days=3))
    await earn(site.id, 4 * G, now - timedelta(days=40))
    await ledger.book("deposit", "0x" + "11" * 32, [(ledger.external("G$"), -9 * G), (ledger.site(site.id), 9 * G)],
                      now=now)  # a top-up is money in, not earnings

    html = await (await publisher.get("/portal")).get_data(as_text=True)
    assert 'id="earned-today">1 G$' in html and 'id="earned-recent">3 G$' in html
    assert 'id="earned-lifetime">7 G$' in html
    assert 'id="fill-rate">50.0 %' in html and "10 of 20 requests" in html
    row = html[html.index(f'<tr id="row-{site.id}">'):]
    row = row[:row.index("</tr>")]
    cells = [cell.split("</td>")[0] for cell in row.split("<td>")[1:]]
    assert cells == ["200", "5", "2.50 %", "1", "300", "6", "2.00 %", "3", "1300", "106", "8.15 %", "7"]
    assert html.count('<rect class="chart-bar"') == 30
    assert f"<title>{today.isoformat()}: 1 G$</title>" in html
    assert f"<title>{(today - timedelta(days=3)).isoformat()}: 2 G$</title>" in html


async def test_an_empty_dashboard_invites_a_first_site(publisher):
    html = await (await publisher.get("/portal")).get_data(as_text=True)
    assert 'id="no-sites"' in html and 'id="fill-rate">\u2013' in html
    assert "Nothing earned in these days yet" in html and '<rect class="chart-bar"' not in html


async def test_the_earnings_chart_shows_the_range_of_days_asked_for(publisher, clock):
    now = clock.now()
    site = await make_site(await make_publisher(publisher.wallet))
    theirs = await make_site()
    await earn(site.id, G, now)
    await earn(site.id, 4 * G, now - timedelta(days=40))
    await earn(site.id, 2 * G, now - timedelta(days=46))
    await earn(theirs.id, 8 * G, now - timedelta(days=40))  # another account's site
    first, last = (now - timedelta(days=45)).date(), (now - timedelta(days=35)).date()

    html = await (await publisher.get(f"/portal?from={first}&to={last}")).get_data(as_text=True)
    assert f"<h2 id=\"chart-heading\">Earnings, {first} to {last}</h2>" in html
    assert html.count('<rect class="chart-bar"') == 11 and "<h1>Dashboard</h1>" in html
    assert f"<title>{(now - timedelta(days=40)).date()}: 4 G$</title>" in html
    assert "total 4 G$" in html and f'id="earnings-from" name="from" value="{first}"' in html
    assert 'id="earned-recent">1 G$' in html  # the 30-day figures stay the last 30 days

    panel = await publisher.get(f"/portal?from={first}&to={last}", htmx=True)
    fragment = await panel.get_data(as_text=True)
    assert panel.status_code == 200 and fragment.lstrip().startswith("<section id=\"earnings\"")
    assert "<h1>" not in fragment and fragment.count('<rect class="chart-bar"') == 11


async def test_a_range_that_is_not_one_is_refused_beside_its_field(publisher, clock):
    today = clock.now().date()
    cases = [(f"from={today}&to={today - timedelta(days=1)}", "to", "To: the last day is before the first."),
             (f"from={today}&to={today + timedelta(days=1)}", "to", "To: the last day cannot be after today (UTC)."),
             (f"from={today - timedelta(days=92)}&to={today}", "from", "From: at most 92 days at a time."),
             ("from=2026-13-01", "from", "From: a day written YYYY-MM-DD")]
    for query, field, message in cases:
        for htmx in (True, False):
            response = await publisher.get(f"/portal?{query}", htmx=htmx)
            html = await response.get_data(as_text=True)
            assert response.status_code == 400, query
            assert re.search(rf'id="earnings-{field}" name="{field}" value="[^"]*"\s+aria-invalid="true" '
                             r'aria-describedby="earnings-error"', html), query
            assert '<p id="earnings-error" class="error" role="alert">' + message in html
            assert html.count('<rect class="chart-bar"') == 0 and "Nothing earned in these days yet" in html
            assert ("<h1>Dashboard</h1>" in html) is not htmx
    refused = await publisher.get(f"/portal?from={today}&to={today - timedelta(days=1)}", htmx=True)
    assert 'value="' + str(today - timedelta(days=1)) + '"' in await refused.get_data(as_text=True)  # as typed


async def test_the_site_page_shows_what_visitors_answered_there(publisher):
    site = await make_site(await make_publisher(publisher.wallet))
    elsewhere = await make_site()
    poll = await make_task(kind=TaskKind.POLL, title="Favourite chain", config=config_json(TaskKind.POLL, {
        "question": "Which chain?", "options": [{"id": "celo", "label": "Celo"}, {"id": "eth", "label": "Ethereum"}]}))
    feedback = await make_task(kind=TaskKind.FEEDBACK, title="Rate us", config=config_json(TaskKind.FEEDBACK, {
        "question": "Useful?", "rating": {"min": 1, "max": 5, "required": True}}))
    answers = [(poll, site, {"optionId": "celo"}), (poll, site, {"optionId": "celo"}),
               (poll, site, {"optionId": "eth"}), (poll, elsewhere, {"optionId": "eth"}),
               (feedback, site, {"rating": 5}), (feedback, site, {"rating": 2, "text": "<b>meh</b>"})]
    for index, (unit, where, answer) in enumerate(answers):
        await Interaction.create(id=new_id("int"), unit=unit, site=where, respondent=f"fp:{index}",
                                 fingerprint=str(index), answers=answer, created_at=site.created_at)
    html = await (await publisher.get(f"/portal/sites/{site.id}/traffic")).get_data(as_text=True)
    assert "Favourite chain <span class=\"muted\">(poll, 3 responses)" in html
    assert "<tr><td>Celo</td><td>2</td></tr><tr><td>Ethereum</td><td>1</td></tr>" in html
    assert "Average rating: <strong>3.50</strong>" in html and "<tr><td>5</td><td>1</td></tr>" in html
    assert "meh" not in html  # free text stays with the unit's owner


async def test_events_export_as_csv_for_a_range_of_days(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet))
    campaign = await make_campaign()
    creative = await make_creative(campaign)
    now = clock.now()
    for days_ago, page_url in ((0, "https://pub.example/a"), (2, "=HYPERLINK(\"http://evil\")"), (10, "old")):
        await TrackingEvent.create(
            id=new_id("ev"), type=EventType.IMPRESSION, campaign=campaign, creative=creative, site=site,
            fingerprint="f", rendered=True, viewport_visible=True, page_url=page_url, billable=days_ago == 0,
            refusal_reason=None if days_ago == 0 else "token_missing", publisher_amount=Decimal(G // 1000 * 2),
            received_at=now - timedelta(days=days_ago))
    start, end = (now - timedelta(days=5)).date(), now.date()
    response = await publisher.get(f"/portal/sites/{site.id}/events.csv?from={start}&to={end}")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"] == f'attachment; filename="events-{site.id}-{start}-{end}.csv"'
    rows = list(csv.reader(io.StringIO(await response.get_data(as_text=True))))
    assert rows[0] == ["eventId", "receivedAt", "type", "campaignId", "adId", "placement", "billable",
                       "refusalReason", "publisherAmount", "pageUrl"]
    assert [row[9] for row in rows[1:]] == ["'=HYPERLINK(\"http://evil\")", "https://pub.example/a"]
    assert rows[2][6:9] == ["true", "", "0.002"] and rows[1][7] == "token_missing"


async def test_a_bad_export_range_is_shown_beside_the_form(publisher, clock):
    site = await make_site(await make_publisher(publisher.wallet))
    today = clock.now().date()
    cases = [("2026-13-01", str(today), "From: a day written YYYY-MM-DD"),
             (str(today), str(today - timedelta(days=1)), "To: the last day is before the first."),
             (str(today - timedelta(days=100)), str(today), "From: at most 92 days at a time."),
             (str(today), str(today + timedelta(days=1)), "To: the last day cannot be after today (UTC).")]
    for start, end, message in cases:
        response = await publisher.get(f"/portal/sites/{site.id}/events.csv?from={start}&to={end}")
        assert response.status_code == 400
        html = await response.get_data(as_text=True)
        assert message in html and 'id="export-error"' in html and "<h1>" in html
