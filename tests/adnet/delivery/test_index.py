"""The serving index holds what may serve, and nothing else."""

from datetime import timedelta

from adnet.campaigns.models import CampaignStatus
from adnet.delivery.index import build_index
from adnet.delivery.sites import SiteEntry
from tests.factories import G, make_campaign, make_creative, make_site


async def test_index_holds_only_what_may_serve(app, clock):
    site = await make_site()
    await make_site(active=False)
    live = await make_campaign()
    creative = await make_creative(live)
    await make_creative(live, status="review")
    await make_campaign(status=CampaignStatus.REVIEW)
    await make_campaign(ends_at=clock.now() - timedelta(days=1))
    index = await build_index(clock.now())
    assert index.sites == {site.id: SiteEntry(site.id, site.domain, verified=site.verified)}
    assert set(index.campaigns) == {live.id}
    assert set(index.creatives) == {creative.id}
    assert index.campaigns[live.id].remaining == 100 * G
