"""The change log, how processes without Redis hear each other's changes through the database: a change is heard
at once by the process that made it and by every other at its next exchange, once, never by its own maker again;
announcements made together are one row; a row committed late is still heard; rows are pruned; an ``adnet``
command's changes reach the servers through the log, or through Redis where there is one."""

from __future__ import annotations

import json

import pytest

from adnet.core import changes
from adnet.jobs import changelog
from adnet.jobs.changelog import KEEP_SECONDS, LOOKBACK_ROWS, ChangeLog
from adnet.jobs.models import AnnouncedChange
from tests.adnet.core.test_changes import Heard
from tests.conftest import make_settings

pytestmark = pytest.mark.usefixtures("app")  # the database, open and emptied


async def processes(clock, *names: str) -> tuple[dict[str, Heard], dict[str, ChangeLog]]:
    """A started change log per name, each with a listener that keeps what it heard."""
    heard = {name: Heard() for name in names}
    logs = {name: ChangeLog(heard[name], clock) for name in names}
    for log in logs.values():
        await log.start()
    return heard, logs


async def test_a_change_is_heard_at_once_by_its_maker_and_at_their_next_exchange_by_the_others(clock):
    heard, logs = await processes(clock, "a", "b", "c")

    logs["a"].announce(frozenset({"cmp_one"}))
    assert heard["a"].heard == [{"cmp_one"}] and logs["a"].due.is_set()
    assert heard["b"].heard == []
    for log in logs.values():
        await log.exchange()
    logs["b"].announce(frozenset({"site_two"}))
    for log in (logs["b"], logs["a"], logs["c"], logs["a"]):  # a reads twice: it hears b's change once
        await log.exchange()

    assert {name: listener.heard for name, listener in heard.items()} == {
        "a": [{"cmp_one"}, {"site_two"}], "b": [{"cmp_one"}, {"site_two"}], "c": [{"cmp_one"}, {"site_two"}]}


async def test_announcements_made_together_are_one_row(clock):
    heard, logs = await processes(clock, "a", "b")
    for number in range(10):
        logs["a"].announce(frozenset({f"cmp_{number}"}))
    await logs["a"].exchange()
    await logs["b"].exchange()

    assert await AnnouncedChange.all().count() == 1
    assert heard["b"].heard == [{f"cmp_{number}" for number in range(10)}]


async def test_a_process_skips_what_was_announced_before_it_started(clock):
    await changelog.write("other", {"cmp_before"}, clock)
    heard, logs = await processes(clock, "late")
    await logs["late"].exchange()
    assert heard["late"].heard == []


async def test_a_row_committed_after_a_later_one_is_still_heard_once(clock):
    """On PostgreSQL a row can commit after one with a higher id that a reader already read."""
    heard, logs = await processes(clock, "reader")
    await AnnouncedChange.create(id=LOOKBACK_ROWS * 2, origin="fast", changed='["cmp_fast"]', created_at=clock.now())
    await logs["reader"].exchange()
    await AnnouncedChange.create(id=LOOKBACK_ROWS * 2 - 3, origin="slow", changed='["cmp_slow"]',
                                 created_at=clock.now())
    await logs["reader"].exchange()
    await logs["reader"].exchange()
    assert heard["reader"].heard == [{"cmp_fast"}, {"cmp_slow"}]


async def test_a_row_not_understood_asks_for_everything(clock):
    heard, logs = await processes(clock, "reader")
    await AnnouncedChange.create(origin="broken", changed="not json", created_at=clock.now())
    await logs["reader"].exchange()
    assert heard["reader"].heard == [None]


async def test_a_change_not_written_is_written_at_the_next_turn(clock, monkeypatch):
    heard, logs = await processes(clock, "a", "b")

    async def unreachable(*args) -> None:
        raise ConnectionError("database unreachable")

    with monkeypatch.context() as patched:
        patched.setattr(changelog, "write", unreachable)
        logs["a"].announce(frozenset({"cmp_kept"}))
        with pytest.raises(ConnectionError):
            await logs["a"].exchange()
    await logs["a"].exchange()
    await logs["b"].exchange()
    assert heard["b"].heard == [{"cmp_kept"}]


async def test_rows_past_their_time_are_pruned(clock, monkeypatch):
    _, logs = await processes(clock, "a")
    await changelog.write("old", {"cmp_old"}, clock)
    clock.advance(seconds=KEEP_SECONDS + 1)
    await changelog.write("new", {"cmp_new"}, clock)
    await logs["a"].exchange()  # not yet: pruning runs every PRUNE_SECONDS
    assert await AnnouncedChange.all().count() == 2
    monkeypatch.setattr(logs["a"], "_pruned_at", logs["a"]._pruned_at - changelog.PRUNE_SECONDS)
    await logs["a"].exchange()
    assert await AnnouncedChange.all().values_list("origin", flat=True) == ["new"]


async def test_a_commands_changes_reach_the_servers_through_the_log(clock, database_url, tmp_path):
    heard, logs = await processes(clock, "server")
    settings = make_settings(database_url, tmp_path)
    async with changelog.announced(settings) as collected:
        changes.announce("cmp_approved")
        changes.announce("ad_one", "ad_two")
    changes.announce("cmp_after")  # outside the block: heard by no one
    await logs["server"].exchange()

    assert collected == {"cmp_approved", "ad_one", "ad_two"}
    assert heard["server"].heard == [{"cmp_approved", "ad_one", "ad_two"}]
    (row,) = await AnnouncedChange.all()
    assert json.loads(row.changed) == ["ad_one", "ad_two", "cmp_approved"]


async def test_a_commands_changes_reach_the_servers_through_redis_where_there_is_one(clock, database_url, tmp_path,
                                                                                       redis_url):
    heard = Heard()
    server = changes.Broadcast(redis_url, heard)
    await server.start()
    try:
        async with changelog.announced(make_settings(database_url, tmp_path, ADNET_REDIS_URL=redis_url)):
            changes.announce("cmp_approved")
        await heard.reaches(1)
    finally:
        await server.stop()
    assert heard.heard == [{"cmp_approved"}]
    assert await AnnouncedChange.all().count() == 0


async def test_a_command_whose_servers_cannot_be_told_keeps_its_change_and_warns(database_url, tmp_path, caplog):
    settings = make_settings(database_url, tmp_path, ADNET_REDIS_URL="redis://127.0.0.1:1/0")
    async with changelog.announced(settings):
        changes.announce("cmp_approved")
    assert "changes not told to the servers" in caplog.text and "cmp_approved" in caplog.text


async def test_the_apps_change_log_is_heard_by_another_process(app, clock):
    """The app's own announcements (its requests and jobs listen to ``announce``) go out through its job."""
    heard, logs = await processes(clock, "other")
    app.extensions["adnet"].announce(frozenset({"cmp_from_app"}))
    await app.extensions["adnet"].jobs.run("changes")
    await logs["other"].exchange()
    assert heard["other"].heard == [{"cmp_from_app"}]
