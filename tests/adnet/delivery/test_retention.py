"""Retention: raw events, deduplication keys, billing windows and wallets proven for impressions are deleted once
kept long enough, in batches; the daily aggregates stay."""

from datetime import timedelta
from decimal import Decimal

from adnet.conversions.models import ViewBinding
from adnet.delivery.models import BillingWindow, DedupKey, ReachViewerDaily, TrackingEvent, TrafficDaily
from adnet.delivery.reach import KEPT_DAYS
from adnet.delivery.retention import prune
from tests.factories import make_campaign, make_creative, make_site


async def test_what_is_kept_no_longer_is_deleted_and_the_aggregates_stay(app, clock):
    site, campaign = await make_site(), await make_campaign()
    creative = await make_creative(campaign)
    now = clock.now()

    async def event(event_id: str, age: timedelta) -> None:
        await TrackingEvent.create(id=event_id, type="IMPRESSION", campaign=campaign, creative=creative, site=site,
                                   fingerprint="fp_viewer", rendered=True, viewport_visible=True, billable=True,
                                   received_at=now - age)

    for number in range(7):
        await event(f"ev_old_{number}", timedelta(days=91, minutes=number))
    await event("ev_recent", timedelta(days=89))
    await DedupKey.create(fingerprint="fp_viewer", campaign_id=campaign.id, type="IMPRESSION",
                          last_accepted_at=now - timedelta(minutes=61))
    await DedupKey.create(fingerprint="fp_other", campaign_id=campaign.id, type="IMPRESSION",
                          last_accepted_at=now - timedelta(minutes=59))
    await BillingWindow.create(key="spend:cmp", window_start=now - timedelta(days=2), used=Decimal(5))
    await BillingWindow.create(key="spend:cmp", window_start=now.replace(hour=0, minute=0, second=0, microsecond=0),
                               used=Decimal(5))
    await TrafficDaily.create(day=(now - timedelta(days=91)).date(), site=site, campaign=campaign, type="IMPRESSION",
                              reason="", events=7)

    pruned = await prune(now, retention_days=90, batch_rows=3)

    assert (pruned.events, pruned.dedup_keys, pruned.windows) == (7, 1, 1)
    assert await TrackingEvent.all().values_list("id", flat=True) == ["ev_recent"]
    assert await DedupKey.all().values_list("fingerprint", flat=True) == ["fp_other"]
    assert await BillingWindow.all().count() == 1
    assert await TrafficDaily.all().values_list("events", flat=True) == [7]
    assert (await prune(now, retention_days=90)).events == 0  # nothing left: idempotent


async def test_the_retention_job_keeps_events_for_the_configured_days(app, clock, settings):
    site, campaign = await make_site(), await make_campaign()
    creative = await make_creative(campaign)
    for event_id, age in (("ev_kept", settings.event_retention_days - 1), ("ev_gone", settings.event_retention_days)):
        await TrackingEvent.create(id=event_id, type="IMPRESSION", campaign=campaign, creative=creative, site=site,
                                   fingerprint="fp_viewer", rendered=True, viewport_visible=True, billable=False,
                                   refusal_reason="not_viewable",
                                   received_at=clock.now() - timedelta(days=age, seconds=1))
    pruned = await app.extensions["adnet"].jobs.run("retention")
    assert pruned.events == 1 and await TrackingEvent.all().values_list("id", flat=True) == ["ev_kept"]


async def test_wallets_proven_for_impressions_are_kept_two_days(app, clock):
    now = clock.now()
    for number, age in enumerate((timedelta(days=2, minutes=1), timedelta(days=2, minutes=2), timedelta(hours=47))):
        await ViewBinding.create(impression_event_id=f"ev_{number}", campaign_id="cmp", site_id="site",
                                 creative_id="ad", wallet="0x" + "ab" * 20, seen_at=now - age, bound_at=now - age)
    pruned = await prune(now, retention_days=90, batch_rows=1)
    assert pruned.views == 2
    assert await ViewBinding.all().values_list("impression_event_id", flat=True) == ["ev_2"]


async def test_per_viewer_reach_counts_are_kept_for_the_longest_report_range(app, clock):
    now = clock.now()
    for number, age in enumerate((KEPT_DAYS + 1, KEPT_DAYS + 2, KEPT_DAYS - 1)):
        await ReachViewerDaily.create(day=(now - timedelta(days=age)).date(), campaign_id="cmp_a",
                                      creative_id="crv_a", site_id="site_a", viewer_key=f"{number:032d}",
                                      impressions=1)
    pruned = await prune(now, retention_days=90, batch_rows=1)
    assert pruned.reach == 2
    assert await ReachViewerDaily.all().values_list("viewer_key", flat=True) == [f"{2:032d}"]
