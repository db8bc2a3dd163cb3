"""The reader of on-chain goals: which of a wallet's proven clicks an event attributes to (the last click wins), the
order id of a log, and the job that runs only in the process holding its lease, resuming from its cursor."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from adnet.campaigns.models import CampaignStatus
from adnet.chain.client import ChainLog
from adnet.chain.models import ChainCursor
from adnet.conversions.models import ClickBinding, ViewBinding
from adnet.conversions.onchain import CURSOR_NAME, ReadReport, ended_at, last_click, order_id_of, still_read
from adnet.conversions.views import last_touch
from adnet.jobs.leases import Lease
from adnet.jobs.periodic import GOAL_READER_LEASE

EVENT_AT = datetime(2026, 3, 1, 12, tzinfo=UTC)


def binding(name: str, hours: float) -> ClickBinding:
    return ClickBinding(click_event_id=name, clicked_at=EVENT_AT + timedelta(hours=hours))


def test_the_last_click_at_or_before_the_event_wins():
    bindings = [binding("early", -30), binding("last", -2), binding("at", 0), binding("after", 1)]
    assert last_click(bindings, EVENT_AT).click_event_id == "at"
    assert last_click(bindings[:2], EVENT_AT).click_event_id == "last"


def test_with_clicks_only_after_the_event_the_first_after_is_named_for_before_click():
    assert last_click([binding("later", 5), binding("soon", 1)], EVENT_AT).click_event_id == "soon"


def test_a_logs_order_id_is_its_transaction_and_index():
    entry = ChainLog(address="0x" + "11" * 20, topics=(), data=b"", tx_hash="0x" + "ab" * 32, log_index=7,
                     block_number=3)
    assert order_id_of(entry) == "0x" + "ab" * 32 + ":7"


async def test_the_job_runs_only_in_the_process_holding_its_lease_and_resumes_from_its_cursor(app):
    services = app.extensions["adnet"]
    other = Lease(GOAL_READER_LEASE, clock=services.clock)
    assert await other.hold()
    assert await services.jobs.run("conversion-goals") is None
    assert not await ChainCursor.exists(name=CURSOR_NAME)
    await other.release()
    report = await services.jobs.run("conversion-goals")
    assert isinstance(report, ReadReport) and report.recorded == 0
    cursor = await ChainCursor.get(name=CURSOR_NAME)
    assert cursor.block_number == report.to_block
    assert (await services.jobs.run("conversion-goals")).to_block == report.to_block


def goal_of(status: CampaignStatus, *, updated_hours: float = 0, ends_hours: float | None = None,
            window_days: int = 7) -> SimpleNamespace:
    """A goal and its campaign as the rule reads them (plain values: no database)."""
    campaign = SimpleNamespace(status=status, updated_at=EVENT_AT + timedelta(hours=updated_hours),
                               ends_at=None if ends_hours is None else EVENT_AT + timedelta(hours=ends_hours))
    return SimpleNamespace(campaign=campaign, click_window_days=window_days)


def test_an_ended_campaign_ended_at_its_end_date_or_when_stored_as_ended_if_earlier():
    assert ended_at(goal_of(CampaignStatus.ENDED, updated_hours=5, ends_hours=2).campaign) == EVENT_AT + timedelta(
        hours=2)
    assert ended_at(goal_of(CampaignStatus.ENDED, updated_hours=5).campaign) == EVENT_AT + timedelta(hours=5)
    assert ended_at(goal_of(CampaignStatus.ENDED, updated_hours=5, ends_hours=48).campaign) == EVENT_AT + timedelta(
        hours=5)


def test_goals_are_read_while_reviewed_and_for_their_window_after_the_end():
    assert still_read(goal_of(CampaignStatus.APPROVED, updated_hours=-10_000), EVENT_AT)
    assert still_read(goal_of(CampaignStatus.PAUSED), EVENT_AT)
    assert not still_read(goal_of(CampaignStatus.DRAFT), EVENT_AT)
    assert not still_read(goal_of(CampaignStatus.REVIEW), EVENT_AT)
    assert still_read(goal_of(CampaignStatus.ENDED, updated_hours=-48, window_days=2), EVENT_AT)
    assert not still_read(goal_of(CampaignStatus.ENDED, updated_hours=-48.01, window_days=2), EVENT_AT)
    assert still_read(goal_of(CampaignStatus.ENDED, updated_hours=-24 * 29, window_days=30), EVENT_AT)


def test_a_views_impression_is_chosen_as_a_click_is():
    views = [ViewBinding(impression_event_id=name, seen_at=EVENT_AT + timedelta(hours=hours))
             for name, hours in (("early", -20), ("last", -1), ("after", 2))]
    assert last_touch(views, EVENT_AT, lambda view: view.seen_at).impression_event_id == "last"
    assert last_touch(views[2:], EVENT_AT, lambda view: view.seen_at).impression_event_id == "after"
