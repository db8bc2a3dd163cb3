"""The campaign form's estimate through the Quart test client: the form as it stands (domains, the week grid's cells,
targeting fields as the browser sends them) posts to the estimate, which answers the forecast and the wallet reach
as a fragment; an incomplete form gets a hint, never an error page."""

from __future__ import annotations

from datetime import timedelta

from adnet.delivery.models import RequestHour
from tests.factories import make_site
from tests.portal.test_advertiser_pages import advertiser, campaign_form, settings, text

__all__ = ["advertiser", "settings"]  # the fixtures these tests use
ESTIMATE = "/portal/advertise/campaigns/estimate"


async def test_the_estimate_follows_the_form_as_it_stands(advertiser, clock, services):
    site = await make_site(domain="news.example")
    await services.serving.rebuild()  # the forecast reads the sites serving knows
    first = clock.now().replace(minute=0, second=0, microsecond=0) - timedelta(hours=24)
    await RequestHour.bulk_create([RequestHour(site_id=site.id, hour=first + timedelta(hours=hour), size="300x250",
                                               country="DE", device="desktop", requests=100) for hour in range(24)])
    page = await text(await advertiser.get("/portal/advertise/campaigns/new"))
    assert f'hx-post="{ESTIMATE}"' in page and "Enter the prices and the budget" in page

    office_hours = [("schedule", f"{day}-{hour}") for day in ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
                    for hour in range(9, 17)]
    form = [*campaign_form(clock, siteAllow="news.example").items(), *office_hours, ("targeting.geoInclude", "DE")]
    fragment = await text(await advertiser.post(ESTIMATE, form, htmx=True))
    assert "<dt>Matching requests a day</dt><dd>800</dd>" in fragment  # 8 hours of 100
    assert "800 (100 % of them)" in fragment  # no rival
    # 800 impressions a day cost 1.6 G$ at 2 G$ CPM, and their 1.6 clicks at the assumed 0.2 % click rate 0.16 G$:
    # 50 G$ last 28.4 days.
    assert "about 28 days" in fragment
    assert "<dt>Proven wallets it reaches (30 days)</dt><dd>fewer than 100</dd>" in fragment
    fewer = await text(await advertiser.post(ESTIMATE, [*form, ("targeting.devicesInclude", "mobile")], htmx=True))
    assert "<dt>Matching requests a day</dt><dd>fewer than 100</dd>" in fewer

    hint = await advertiser.post(ESTIMATE, {**campaign_form(clock), "budget": ""}, htmx=True)
    assert hint.status_code == 200 and "To see an estimate:" in await text(hint)
