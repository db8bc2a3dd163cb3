"""Finding a live task: what is made of its row is kept while the row stays the same, and any change of the task or
its campaign is seen at the next lookup."""

from __future__ import annotations

from datetime import timedelta

import pytest

from adnet.campaigns.models import Campaign, CampaignStatus
from adnet.core.errors import DomainError
from adnet.tasks.lookup import live_task, live_task_and_config
from adnet.tasks.models import Task, TaskKind
from tests.factories import make_campaign, make_task


async def test_an_unchanged_row_is_made_up_once(app, clock):
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    first, first_config = await live_task_and_config(task.id, clock.now())
    again, again_config = await live_task_and_config(task.id, clock.now())
    assert again is first and again_config is first_config
    assert first_config.answers == ["a"] and first.id == task.id
    assert await live_task(task.id, clock.now()) is first


async def test_a_changed_task_is_seen_at_the_next_lookup(app, clock):
    task = await make_task(kind=TaskKind.QUIZ, config={"question": "Q?", "answers": ["a"]})
    before, _ = await live_task_and_config(task.id, clock.now())
    await Task.filter(id=task.id).update(config={"question": "Q?", "answers": ["b"]}, reward_points=3)
    after, config = await live_task_and_config(task.id, clock.now())
    assert after is not before and config.answers == ["b"] and after.reward_points == 3
    await Task.filter(id=task.id).update(active=False)
    with pytest.raises(DomainError) as refused:
        await live_task(task.id, clock.now())
    assert refused.value.code == "task_inactive"


async def test_a_changed_campaign_is_seen_at_the_next_lookup(app, clock):
    campaign = await make_campaign()
    task = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config={"question": "Q?", "answers": ["a"]})
    await live_task(task.id, clock.now())
    await Campaign.filter(id=campaign.id).update(ends_at=clock.now() - timedelta(seconds=1))
    with pytest.raises(DomainError) as ended:
        await live_task(task.id, clock.now())
    assert ended.value.code == "task_ended"
    await Campaign.filter(id=campaign.id).update(ends_at=None, status=CampaignStatus.PAUSED)
    with pytest.raises(DomainError) as paused:
        await live_task(task.id, clock.now())
    assert paused.value.code == "task_inactive"
