"""Conversions in the portal: the campaign's report page shows the conversions' totals, their chart, a table per
day and one per goal (value, cost and ROAS), and the site page shows the conversions paid for its clicks and what
they earned it; the figures are those the conversions say."""

from __future__ import annotations

import re
from datetime import timedelta
from decimal import Decimal

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.models import Conversion
from adnet.core.ids import new_id
from adnet.delivery.models import EventType, ReportDaily, TrafficDaily
from tests.factories import EPOCH, G, make_advertiser, make_campaign, make_publisher, make_site
from tests.portal.test_breakdowns import text_of


async def converted(wallet: str, clock):
    """A campaign of ``wallet``'s advertiser account, clicked 4 times today on a site of ``wallet``'s publisher
    account for 2 G$, with two paid purchases (values 30 and 10 G$, CPA 5 G$), an unpaid sign-up without a value
    and a forged conversion that did not attribute: (campaign, site, goals)."""
    campaign = await make_campaign(await make_advertiser(wallet), name="Spring sale")
    site = await make_site(await make_publisher(wallet), domain="news.example")
    day, now = clock.today(), clock.now()
    for kind, events in ((EventType.IMPRESSION, 100), (EventType.CLICK, 4)):
        await TrafficDaily.create(day=day, site=site, campaign=campaign, type=kind, events=events, cost=G,
                                  publisher_amount=G * 7 // 10)
    await ReportDaily.create(day=day, campaign=campaign, site=site, placement="top", impressions=100, clicks=4,
                             cost=2 * G, publisher_amount=G * 14 // 10)
    goals = [await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name=name, event=event, cpa=cpa,
                                         created_at=EPOCH, updated_at=EPOCH)
             for name, event, cpa in (("Purchase", "purchase", 5 * G), ("Sign-up", "signup", 0))]
    for order, goal, value, cost, attributed in (("a", goals[0], 30 * G, 5 * G, True),
                                                 ("b", goals[0], 10 * G, 5 * G, True),
                                                 ("c", goals[1], None, 0, True), ("d", goals[0], 100 * G, 0, False)):
        await Conversion.create(id=new_id("cv"), campaign_id=campaign.id, goal=goal, order_id=order,
                                site_id=site.id if attributed else None, placement="top" if attributed else "",
                                value=None if value is None else Decimal(value), occurred_at=now, received_at=now,
                                clicked_at=now - timedelta(minutes=5) if attributed else None, attributed=attributed,
                                paid=bool(cost), reason=None if attributed else "click_invalid", cost=Decimal(cost),
                                publisher_amount=Decimal(cost * 7 // 10))
    return campaign, site, goals


async def test_the_report_page_charts_and_tables_the_conversions(publisher, clock):
    campaign, _, _ = await converted(publisher.wallet, clock)
    html = text_of(await (await publisher.get(f"/portal/advertise/campaigns/{campaign.id}/report")).get_data(
        as_text=True))
    today = clock.today().isoformat()
    # spend 2 + 10 = 12 G$; 3 conversions of 4 billable clicks; value 40 G$
    assert 'id="total-conversions">3<' in html and 'id="total-roas">3.33\u00d7<' in html
    assert 'id="conversions-chart-title">Conversions per day</title>' in html
    assert f'aria-label="{today}: 3 conversions"' in html
    day_row = re.search(rf'<table class="report" id="conversion-days">.*?<th scope="row">{today}</th>(.*?)</tr>',
                        html, re.S).group(1)
    assert day_row == "<td>3</td><td>75.00 %</td><td>10</td><td>4</td><td>40</td><td>3.33\u00d7</td>"
    goals = re.search(r'<table class="report" id="goal-table">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    assert goals == ('<tr><th scope="row">Purchase</th><td>2</td><td>10</td><td>5</td><td>40</td><td>4.00\u00d7</td>'
                     '</tr><tr><th scope="row">Sign-up</th><td>1</td><td>0</td><td>0</td><td>0</td>'
                     '<td>\u2013</td></tr>')
    assert "<code>click_invalid</code></td><td>1</td>" in html


async def test_a_report_without_conversions_says_so(publisher, clock):
    campaign = await make_campaign(await make_advertiser(publisher.wallet), name="Quiet")
    html = text_of(await (await publisher.get(f"/portal/advertise/campaigns/{campaign.id}/report")).get_data(
        as_text=True))
    assert "No conversion in these days yet." in html and 'id="total-roas">\u2013<' in html
    assert '<p class="muted" id="goal-table">No conversion of this campaign' in html


async def test_the_advertisers_breakdown_by_goal_names_the_goals(publisher, clock):
    campaign, _, goals = await converted(publisher.wallet, clock)
    html = text_of(await (await publisher.get(f"/portal/advertise/breakdown?by=goal&campaignId={campaign.id}")
                          ).get_data(as_text=True))
    assert (f'<th scope="row">Purchase <span class="muted small">{goals[0].id}</span></th><td>0</td><td>0</td>'
            '<td>0.00 %</td><td>10</td><td>2</td><td>\u2013</td><td>5</td><td>40</td><td>4.00\u00d7</td>') in html


async def test_the_site_page_shows_the_conversions_paid_for_its_clicks(publisher, clock):
    _, site, _ = await converted(publisher.wallet, clock)
    html = text_of(await (await publisher.get(f"/portal/sites/{site.id}/traffic")).get_data(as_text=True))
    assert re.search(r'id="traffic-conversions">2 conversions paid\s+for clicks on this site earned 7 G\$ of it.',
                     html)
    assert f'<th scope="row">{clock.today().isoformat()}</th><td>2</td><td>7</td>' in html
    breakdown = text_of(await (await publisher.get(f"/portal/sites/{site.id}/breakdown?by=placement")).get_data(
        as_text=True))
    # earned: 70 % of 2 G$ of traffic and of 10 G$ of conversions; no advertiser's value on a publisher's page
    assert '<th scope="row">top</th><td>100</td><td>4</td><td>4.00 %</td><td>8.4</td><td>2</td><td>50.00 %</td></tr>' \
        in breakdown
    assert "ROAS" not in breakdown
