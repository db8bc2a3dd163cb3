"""Answers to an advertiser's polls, feedback and surveys in the portal: the API's results with a chart per tally
and the CSV download, for the unit's owner only; viewers' words are escaped where they are shown."""

from __future__ import annotations

import re

from adnet.accounts import advertisers
from adnet.tasks.models import TaskKind
from tests.api.test_interactions import FEEDBACK, POLL, SURVEY, make_unit, post
from tests.chain.helpers import user
from tests.factories import make_site, wallet_address
from tests.portal.conftest import portal_sign_in
from tests.portal.test_advertiser_pages import create, registered, text


async def owned(client, kind: TaskKind, config: dict):
    """A signed-in advertiser and a unit of its."""
    owner = await registered(client, user(2))
    unit = await make_unit(kind, config, advertiser=await advertisers.advertiser_of(owner.wallet))
    return owner, unit


async def test_a_polls_votes_are_charted_and_tabled(client):
    owner, unit = await owned(client, TaskKind.POLL, POLL)
    site = await make_site()
    for device, option in enumerate(("eth", "celo", "eth")):
        await post(client, unit, site, {"optionId": option}, wallet=wallet_address(), fingerprint=f"device-{device}")
    page = await text(await owner.get(f"/portal/advertise/units/{unit.id}/results"))
    assert '<h1>Answers: ' in page and 'id="results-responses">3<' in page
    assert '<desc id="chart-poll-desc">Ethereum: 2; Celo: 1; Fuse: 0. 3 in all.</desc>' in page
    assert re.search(r'<rect class="chart-bar" [^>]*width="264.0"[^>]*><title>Ethereum: 2</title>', page)
    assert '<th scope="row">Celo</th><td>1</td><td>33.3 %</td>' in page
    assert f'href="/portal/advertise/units/{unit.id}/results.csv"' in page


async def test_feedback_shows_its_ratings_and_the_viewers_words_escaped(client):
    owner, unit = await owned(client, TaskKind.FEEDBACK, FEEDBACK)
    site = await make_site()
    await post(client, unit, site, {"rating": 4, "text": "<b>Great</b> stuff"}, fingerprint="device-1")
    await post(client, unit, site, {"rating": 2}, fingerprint="device-2")
    page = await text(await owner.get(f"/portal/advertise/units/{unit.id}/results"))
    assert 'on average <strong id="average-rating">3.0</strong>' in page
    assert '<desc id="chart-rating-desc">1: 0; 2: 1; 3: 0; 4: 1; 5: 0. 2 in all.</desc>' in page
    assert "<blockquote>&lt;b&gt;Great&lt;/b&gt; stuff</blockquote>" in page and "<b>Great</b>" not in page
    csv = await owner.get(f"/portal/advertise/units/{unit.id}/results.csv")
    assert csv.status_code == 200 and csv.mimetype == "text/csv"
    assert csv.headers["Content-Disposition"] == f'attachment; filename="{unit.id}-responses.csv"'
    assert (await text(csv)).splitlines()[0] == "interactionId,createdAt,siteId,wallet,points,gs,rating,text"


async def test_a_survey_without_answers_says_so(client):
    owner, unit = await owned(client, TaskKind.SURVEY, SURVEY)
    page = await text(await owner.get(f"/portal/advertise/units/{unit.id}/results"))
    assert "0 started, 0 completed" in page and '<h2 id="question-q1">Pick one</h2>' in page
    assert '<desc id="chart-q2-desc">No answers yet.</desc>' in page and "0 written answers." in page


async def test_only_the_owner_sees_the_answers(client, app):
    _, unit = await owned(client, TaskKind.POLL, POLL)
    stranger = await portal_sign_in(app.test_client(), user(3))
    for path in ("results", "results.csv"):
        refused = await stranger.get(f"/portal/advertise/units/{unit.id}/{path}")
        assert refused.status_code == 403 and "another wallet" in await text(refused)
    anonymous = await app.test_client().get(f"/portal/advertise/units/{unit.id}/results")
    assert anonymous.status_code == 303


async def test_the_campaign_page_links_its_units_answers(client, clock):
    owner = await registered(client, user(2))
    campaign = await create(owner, clock)
    await owner.post(f"/portal/advertise/campaigns/{campaign.id}/tasks",
                     {"kind": "POLL", "title": "Chains", "question": "Which?", "options": "A\nB", "rewardPoints": "0",
                      "rewardGs": "0", "maxPerWallet": "1"})
    page = await text(await owner.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    unit_id = re.search(r'href="/portal/advertise/units/(task_[^/]+)/results">Answers</a>', page).group(1)
    assert (await owner.get(f"/portal/advertise/units/{unit_id}/results")).status_code == 200
