"""Deleting what never served and duplicating campaigns, through the advertiser API: a draft campaign, a creative
or a task of an unreviewed campaign can be deleted (its money returns to the advertiser), nothing of a submitted
campaign can; the database decides under concurrency; a duplicate is a new draft without money."""

from __future__ import annotations

import asyncio

import pytest

from adnet.campaigns.models import Campaign, CampaignStatus, Creative
from adnet.money import ledger
from adnet.tasks.models import Task
from tests.api.test_advertisers import (  # noqa: F401 - settings is the fixture every test uses
    CREATIVE,
    QUIZ,
    Api,
    advertiser_api,
    approved_campaign,
    draft,
    funded_advertiser,
    settings,
)
from tests.factories import G

pytestmark = pytest.mark.usefixtures("banner_cdn")


async def available(api: Api) -> str:
    return (await api.call("GET", "/advertisers/account"))[1]["available"]


async def funded_draft(api: Api, clock) -> tuple[dict, dict, dict]:
    """A draft with a creative, a quiz task with 3 G$ in its pool, and 20 G$ in its budget (of the advertiser's 100)."""
    await funded_advertiser(api)
    campaign = await draft(api, clock)
    _, creative = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/creatives", **CREATIVE)
    _, task = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/tasks", **QUIZ)
    assert (await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/allocate", amount="20"))[0] == 200
    assert (await api.call("POST", f"/advertisers/tasks/{task['id']}/allocate", amount="3"))[0] == 200
    return campaign, creative, task


async def test_deleting_a_draft_returns_its_money_and_removes_its_content(client, clock):
    api = await advertiser_api(client)
    campaign, creative, task = await funded_draft(api, clock)
    assert await available(api) == "77"
    status, body = await api.call("DELETE", f"/advertisers/campaigns/{campaign['id']}")
    assert (status, body) == (200, {"campaignId": campaign["id"], "id": campaign["id"], "deleted": True,
                                    "returned": "23"})
    assert await available(api) == "100"
    assert not await Campaign.exists(id=campaign["id"])
    assert not await Creative.exists(id=creative["id"]) and not await Task.exists(id=task["id"])
    assert await ledger.balance(ledger.campaign(campaign["id"])) == 0
    assert await ledger.balance(ledger.task_pool(task["id"])) == 0
    assert (await api.call("GET", f"/advertisers/campaigns/{campaign['id']}"))[0] == 404


async def test_a_creative_and_a_task_of_a_draft_can_be_deleted(client, clock):
    api = await advertiser_api(client)
    campaign, creative, task = await funded_draft(api, clock)
    assert await api.call("DELETE", f"/advertisers/creatives/{creative['id']}") == (
        200, {"id": creative["id"], "deleted": True, "returned": "0"})
    assert await api.call("DELETE", f"/advertisers/tasks/{task['id']}") == (
        200, {"id": task["id"], "deleted": True, "returned": "3"})
    assert await available(api) == "80"
    _, detail = await api.call("GET", f"/advertisers/campaigns/{campaign['id']}")
    assert (detail["creatives"], detail["tasks"], detail["remaining"]) == ([], [], "20")


async def test_nothing_of_a_submitted_campaign_can_be_deleted(client, clock):
    api, campaign, creative = await approved_campaign(client, clock)
    cid = campaign["id"]
    for path in (f"/advertisers/campaigns/{cid}", f"/advertisers/creatives/{creative['id']}"):
        status, body = await api.call("DELETE", path)
        assert (status, body["error"], body["currentStatus"]) == (409, "campaign_locked", "approved")
    assert await Creative.exists(id=creative["id"])
    assert (await Campaign.get(id=cid)).status == CampaignStatus.APPROVED
    assert await ledger.balance(ledger.campaign(cid)) == 50 * G


async def test_another_wallets_draft_cannot_be_deleted(client, clock):
    owner = await advertiser_api(client)
    campaign, creative, task = await funded_draft(owner, clock)
    stranger = await advertiser_api(client)
    for path in (f"/advertisers/campaigns/{campaign['id']}", f"/advertisers/creatives/{creative['id']}",
                 f"/advertisers/tasks/{task['id']}"):
        status, body = await stranger.call("DELETE", path)
        assert (status, body["error"]) == (403, "not_owner")
    assert await Campaign.exists(id=campaign["id"]) and await Task.exists(id=task["id"])


async def test_identical_deletions_at_once_return_the_money_once(client, clock):
    api = await advertiser_api(client)
    campaign, _, _ = await funded_draft(api, clock)
    answers = await asyncio.gather(*(api.call("DELETE", f"/advertisers/campaigns/{campaign['id']}")
                                     for _ in range(5)))
    assert sorted(status for status, _ in answers) == [200, 404, 404, 404, 404]
    assert await available(api) == "100"


async def test_a_deletion_racing_a_submission_leaves_one_consistent_outcome(client, clock):
    api = await advertiser_api(client)
    campaign, _, _ = await funded_draft(api, clock)
    cid = campaign["id"]
    (deleted, _), (submitted, _) = await asyncio.gather(api.call("DELETE", f"/advertisers/campaigns/{cid}"),
                                                        api.call("POST", f"/advertisers/campaigns/{cid}/submit"))
    if deleted == 200:
        # The submission found the campaign gone, before (404) or at (409) its conditional update.
        assert submitted in (404, 409) and not await Campaign.exists(id=cid) and await available(api) == "100"
    else:
        assert (deleted, submitted) == (409, 200)
        assert (await Campaign.get(id=cid)).status == CampaignStatus.REVIEW and await available(api) == "77"


async def test_a_deletion_racing_allocations_loses_no_money(client, clock):
    api = await advertiser_api(client)
    campaign, _, task = await funded_draft(api, clock)
    cid = campaign["id"]
    await asyncio.gather(api.call("DELETE", f"/advertisers/campaigns/{cid}"),
                         *(api.call("POST", f"/advertisers/campaigns/{cid}/allocate", amount="1") for _ in range(3)),
                         *(api.call("POST", f"/advertisers/tasks/{task['id']}/allocate", amount="1")
                           for _ in range(3)))
    held = await ledger.balance(ledger.campaign(cid)) + await ledger.balance(ledger.task_pool(task["id"]))
    assert not await Campaign.exists(id=cid) and held == 0
    assert await available(api) == "100"


async def test_a_duplicate_is_a_new_draft_with_the_content_and_no_money(client, clock):
    api, campaign, creative = await approved_campaign(client, clock)
    status, copy = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/duplicate")
    assert status == 201
    assert copy["id"] != campaign["id"]
    assert (copy["name"], copy["status"], copy["funded"], copy["remaining"]) == (
        "Spring sale (copy)", "draft", "0", "0")
    assert (copy["cpm"], copy["cpc"], copy["budget"], copy["sizes"]) == ("2", "0.1", "50", ["300x250"])
    [copied] = copy["creatives"]
    assert copied["id"] != creative["id"] and copied["status"] == "review"
    assert (copied["bannerUrl"], copied["size"]) == (creative["bannerUrl"], creative["size"])
    _, original = await api.call("GET", f"/advertisers/campaigns/{campaign['id']}")
    assert (original["status"], original["remaining"]) == ("approved", "50")
    status, _ = await api.call("DELETE", f"/advertisers/campaigns/{copy['id']}")
    assert status == 200


async def test_a_duplicate_copies_the_tasks(client, clock):
    api = await advertiser_api(client)
    campaign, _, task = await funded_draft(api, clock)
    _, copy = await api.call("POST", f"/advertisers/campaigns/{campaign['id']}/duplicate")
    [copied] = copy["tasks"]
    assert copied["id"] != task["id"]
    assert (copied["kind"], copied["title"], copied["rewardGs"]) == ("QUIZ", "Quiz", "0.5")
    stored = await Task.get(id=copied["id"])
    assert stored.config == (await Task.get(id=task["id"])).config
    assert await ledger.balance(ledger.task_pool(copied["id"])) == 0
