"""The serving index holds what may serve, and nothing else; a change is read for what it names alone."""

from datetime import UTC, timedelta
from decimal import Decimal

from adnet.accounts.models import Site
from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.delivery.index import build_index, read_budgets, refresh_index
from adnet.delivery.sites import SiteEntry
from adnet.money import ledger
from adnet.tasks.models import Task, TaskKind
from tests.api.test_serve import POLL, VISIT
from tests.factories import G, fund, make_campaign, make_creative, make_site, make_task
from tests.sql import recorded_statements


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


async def test_the_index_keeps_its_times_in_the_clocks_utc(app, clock):
    """Every serve compares each campaign's flight with the clock's now: in the same tzinfo, datetime compares
    them without asking either for its offset."""
    campaign = await make_campaign(ends_at=clock.now() + timedelta(days=3))
    await make_task(campaign=campaign, kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    await make_task(kind=TaskKind.POLL, config=POLL)
    index = await build_index(clock.now())
    entry = index.campaigns[campaign.id]
    times = [entry.starts_at, entry.ends_at, *(task.starts_at for task in entry.tasks),
             *(unit.starts_at for unit in index.units)]
    assert len(times) == 4 and all(moment.tzinfo is UTC for moment in times)
    assert entry.ends_at == clock.now() + timedelta(days=3)


async def test_a_refresh_reads_only_the_campaigns_it_names(app, clock):
    site = await make_site()
    paused, repriced, untold = [await make_campaign() for _ in range(3)]
    creative = await make_creative(paused)
    for campaign in (repriced, untold):
        await make_creative(campaign)
    index = await build_index(clock.now())
    await Campaign.filter(id=paused.id).update(status=CampaignStatus.PAUSED)
    await Campaign.filter(id__in=[repriced.id, untold.id]).update(cpm=Decimal(7 * G))

    with recorded_statements() as sent:
        await refresh_index(index, [paused.id, repriced.id], clock.now())

    assert set(index.campaigns) == {repriced.id, untold.id} and creative.id not in index.creatives
    assert (index.campaigns[repriced.id].cpm, index.campaigns[untold.id].cpm) == (7 * G, 2 * G)
    assert index.sites == {site.id: SiteEntry(site.id, site.domain, verified=site.verified)}
    assert not any(untold.id in statement for statement in sent)
    assert not any('"site"' in statement or "FROM site" in statement for statement in sent)


async def test_creatives_tasks_and_sites_are_refreshed_by_their_own_ids(app, clock):
    site = await make_site()
    campaign = await make_campaign()
    shown = await make_creative(campaign)
    index = await build_index(clock.now())
    added = await make_creative(campaign)
    visit = await make_task(kind=TaskKind.VISIT_URL, campaign=campaign, config=VISIT)
    poll = await make_task(kind=TaskKind.POLL, config=POLL)
    newcomer = await make_site()
    await Site.filter(id=site.id).update(active=False)

    await refresh_index(index, [added.id, poll.id, visit.id, site.id, newcomer.id], clock.now())

    assert set(index.creatives) == {shown.id, added.id}
    assert [task.id for task in index.campaigns[campaign.id].tasks] == [visit.id]
    assert [unit.id for unit in index.units] == [poll.id]
    assert set(index.sites) == {newcomer.id}

    await Task.filter(id=poll.id).update(active=False)
    await refresh_index(index, [poll.id], clock.now())
    assert index.units == ()


async def test_budgets_are_read_for_every_campaign_in_two_queries(app, clock):
    campaign = await make_campaign()
    index = await build_index(clock.now())
    await fund(ledger.campaign(campaign.id), -30 * G, now=clock.now())

    with recorded_statements() as sent:
        index.update_budgets(*await read_budgets(clock.now()))

    assert index.campaigns[campaign.id].remaining == 70 * G
    assert len(sent) == 2


async def test_the_index_job_applies_announced_changes_without_a_rebuild(app, clock):
    server = app.extensions["adnet"].serving
    await server.rebuild()
    built_at = server.index.built_at
    campaign = await make_campaign()
    await make_creative(campaign)
    server.invalidate(frozenset({campaign.id}))
    await server.update()
    assert campaign.id in server.index.campaigns and server.index.built_at == built_at

    server.invalidate(None)  # anything may have changed: the whole index is read again
    await server.update()
    assert server.index.built_at > built_at
