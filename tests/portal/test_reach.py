"""Reach and frequency in the portal: the campaign's report loads its section, which shows the distinct viewers,
the average frequency and the distribution of impressions tracked through ``/api/track``, with its CSV; another
advertiser cannot read it."""

from __future__ import annotations

import pytest

from adnet.campaigns import review as operators
from adnet.delivery.reach import REACH_LEASE, SETTLE
from adnet.money import ledger
from tests.api.test_track import billed, event_body, post, serve_ad
from tests.conftest import rebuild_index
from tests.factories import G, fund, make_site
from tests.portal.test_advertiser_pages import (  # noqa: F401 - fixtures
    CREATIVE,
    OPERATOR,
    _advertiser_of,
    advertiser,
    create,
    registered,
    settings,
    stranger,
    text,
)

pytestmark = pytest.mark.usefixtures("banner_cdn")


async def test_the_report_section_shows_reach_and_frequency(advertiser, stranger, client, clock,  # noqa: F811
                                                             services):
    site = await make_site()
    await fund(ledger.advertiser((await _advertiser_of(advertiser)).id), 50 * G)
    campaign = await create(advertiser, clock)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    await advertiser.post(f"{base}/creatives", CREATIVE)
    await advertiser.post(f"{base}/allocate", {"amount": "50"})
    await advertiser.post(f"{base}/submit")
    await operators.approve_campaign(OPERATOR.address.lower(), campaign.id, clock.now())
    await rebuild_index(client.app)
    for number, viewer in enumerate(("viewer-a", "viewer-a", "viewer-b")):
        ad = await serve_ad(client, site, viewer=viewer)
        clock.advance(seconds=2)
        assert await billed((await post(client, event_body(ad, site, fingerprint=f"fp-{number}")))[1])
    clock.advance(seconds=SETTLE.total_seconds() + 1)
    await services.jobs.run(REACH_LEASE)

    report = await text(await advertiser.get(f"{base}/report"))
    assert f'hx-get="{base}/reach?from=' in report
    section = await text(await advertiser.get(f"{base}/reach", htmx=True))
    assert "<html" not in section
    assert 'id="reach-total">2<' in section and 'id="reach-average">1.50<' in section
    assert 'class="chart tally-chart"' in section and "1 times: 1; 2 times: 1;" in section
    assert '<th scope="row">1</th><td>1</td>' in section and '<th scope="row">2</th><td>1</td>' in section
    whole = await text(await advertiser.get(f"{base}/reach"))
    assert "<html" in whole and 'id="reach-total">2<' in whole
    exported = await advertiser.get(f"{base}/reach.csv")
    assert exported.mimetype == "text/csv" and "frequency,2,1,," in await text(exported)
    refused = await stranger.get(f"{base}/reach")
    assert refused.status_code in (403, 404)
