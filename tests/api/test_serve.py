"""GET /api/serve through HTTP: the response shapes, who is a candidate, validation, CORS, caching, fill-rate
counting, and that a serve reads nothing from the database."""

from collections import Counter
from datetime import timedelta

import pytest
from quart import current_app

from adnet.accounts.models import Site
from adnet.campaigns.models import CampaignStatus, Category, CreativeStatus
from adnet.core import changes
from adnet.core.ids import new_id
from adnet.delivery.models import SiteDailyStat
from adnet.delivery.tokens import verify_token
from adnet.tasks.models import Completion, TaskKind
from tests.conftest import rebuild_index
from tests.factories import G, make_campaign, make_creative, make_house_ad, make_site, make_task, wallet_address
from tests.sql import recorded_statements
from tests.waiting import eventually

POLL = {"question": "Which chain?", "options": [{"id": "a", "label": "A"}, {"id": "b", "label": "B"}]}
QUIZ = {"question": "2+2?", "answers": ["four-secret"], "choices": ["3", "four-secret"]}
VISIT = {"url": "https://advertiser.example/visit"}


@pytest.fixture(autouse=True)
async def app_context(app):
    """The app (whose startup started serving and tracking) as the current app, for ``serving.refresh()``."""
    async with app.app_context():
        yield app.extensions["adnet"]


async def banner_setup(**campaign_fields):
    site = await make_site()
    campaign = await make_campaign(**campaign_fields)
    creative = await make_creative(campaign)
    await rebuild_index(current_app)
    return site, campaign, creative


async def get_serve(client, **params):
    response = await client.get("/api/serve", query_string=params, headers={"Origin": "https://publisher.example"})
    return response, await response.get_json()


async def test_banner_has_every_field_and_a_valid_token(client, settings, clock):
    site, campaign, creative = await banner_setup()
    wallet = wallet_address()
    response, body = await get_serve(client, siteId=site.id, size="300x250", placement="top", wallet=wallet)
    assert response.status_code == 200
    assert body["kind"] == "BANNER"
    assert body["bannerClickActive"] is True
    assert body["attachedTasks"] == []
    ad = body["ad"]
    assert ad["id"] == creative.id and ad["campaignId"] == campaign.id
    assert ad["bannerUrl"] == creative.banner_url and ad["targetUrl"] == creative.target_url
    assert ad["description"] == creative.description and ad["mediaType"] == "image"
    claims = verify_token(ad["trackingToken"], secrets=(settings.tracking_secret,), now=clock.now())
    assert (claims.ad_id, claims.campaign_id, claims.site_id) == (creative.id, campaign.id, site.id)
    assert (claims.placement, claims.size, claims.wallet) == ("top", "300x250", wallet)
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_serving_performs_no_database_query(client):
    site, campaign, _ = await banner_setup()
    await make_task(kind=TaskKind.POLL, config=POLL)
    await make_task(kind=TaskKind.QUIZ, campaign=campaign, config=QUIZ)
    await make_house_ad(site, width=728, height=90)
    await Site.filter(id=site.id).update(placement_floors={"premium": str(1000 * G)})
    blocked = await make_campaign(category=Category.GAMBLING)
    await make_creative(blocked)
    # A second site whose owner's controls (adnet.delivery.controls) block and refuse: applied from the index too.
    controlled = await make_site(controls={"blocked_categories": ["gambling"], "refused_task_kinds": ["SURVEY"],
                                           "blocked_campaigns": [new_id("cmp")], "attached_tasks": False})
    await rebuild_index(client.app)
    await get_serve(client, siteId=site.id)  # warm-up outside the count
    kinds: Counter[str] = Counter()
    with recorded_statements() as queries:
        for params in ({"siteId": site.id}, {"siteId": site.id, "size": "300x250"},
                       {"siteId": site.id, "kind": "POLL"}, {"siteId": site.id, "attached": "1"},
                       {"siteId": site.id, "size": "1x1"}, {"siteId": site.id, "kind": "SURVEY"},
                       {"siteId": site.id, "size": "728x90"}, {"siteId": site.id, "placement": "premium"}):
            for _ in range(5):
                response, body = await get_serve(client, **params)
                assert response.status_code == 200
                kinds[params.get("size") or params.get("placement") or ""] += body["kind"] == "HOUSE"
        for params in ({}, {"size": "300x250"}, {"kind": "POLL"}, {"attached": "1"}, {"size": "1x1"},
                       {"kind": "SURVEY"}):
            for _ in range(5):
                response, body = await get_serve(client, siteId=controlled.id, **params)
                assert response.status_code == 200
                assert body["kind"] != "SURVEY" and body.get("attachedTasks", []) == []
                assert body.get("ad", {}).get("campaignId") != blocked.id
    assert queries == []
    # The house ad fills the slots no paid campaign does: its own size, and the placement whose floor is too high.
    assert {key: count for key, count in kinds.items() if count} == {"728x90": 5, "premium": 5}


async def test_a_site_registered_after_the_index_costs_one_lookup_then_none(client):
    await banner_setup()
    late_site = await make_site()
    with recorded_statements() as first:
        response, body = await get_serve(client, siteId=late_site.id)
    assert response.status_code == 200 and body["kind"] == "BANNER"
    assert len(first) == 1
    with recorded_statements() as later:
        await get_serve(client, siteId=late_site.id)
    assert later == []


async def test_unknown_or_inactive_site_is_404_and_cached(client):
    await banner_setup()
    inactive = await make_site(active=False)
    for site_id in ("site_doesnotexist1234", inactive.id, "not-an-id"):
        response, body = await get_serve(client, siteId=site_id)
        assert response.status_code == 404
        assert body["error"] == "not_found"
        assert response.headers["Cache-Control"] == "no-store"
    with recorded_statements() as queries:
        response, _ = await get_serve(client, siteId="site_doesnotexist1234")
    assert response.status_code == 404 and queries == []


@pytest.mark.parametrize(("params", "status", "code", "field"), [
    ({}, 400, "missing_field", "siteId"),
    ({"kind": "BANNER,VIDEO"}, 400, "invalid_field", "kind"),
    ({"kind": ""}, 400, "invalid_field", "kind"),
    ({"size": "300by250"}, 400, "invalid_field", "size"),
    ({"size": "0x250"}, 400, "invalid_field", "size"),
    ({"wallet": "0x1234"}, 400, "invalid_wallet", "wallet"),
    ({"wallet": "0xAbCdEf0123456789aBcDeF0123456789AbCdEf01"}, 400, "invalid_wallet", "wallet"),
    ({"attached": "yes"}, 400, "invalid_field", "attached"),
    ({"placement": "p" * 65}, 400, "invalid_field", "placement"),
])
async def test_invalid_query_is_400_naming_the_parameter(client, params, status, code, field):
    site, _, _ = await banner_setup()
    query = {"siteId": site.id, **params} if params else {}
    response, body = await get_serve(client, **query)
    assert response.status_code == status
    assert body["error"] == code and body["field"] == field
    assert response.headers["Cache-Control"] == "no-store"
    assert response.headers["Access-Control-Allow-Origin"] == "*"


async def test_nothing_servable_is_none(client):
    site = await make_site()
    await rebuild_index(client.app)
    response, body = await get_serve(client, siteId=site.id)
    assert response.status_code == 200 and body == {"kind": "NONE"}


@pytest.mark.parametrize("case", ["draft", "paused", "not_started", "ended", "denied", "other_site_only",
                                  "creative_in_review", "no_budget", "other_placement"])
async def test_campaigns_that_may_not_serve_are_not_candidates(client, clock, case):
    site = await make_site()
    now = clock.now()
    fields = {
        "draft": {"status": CampaignStatus.DRAFT},
        "paused": {"status": CampaignStatus.PAUSED},
        "not_started": {"starts_at": now + timedelta(hours=1)},
        "ended": {"ends_at": now - timedelta(seconds=1)},
        "denied": {"site_deny": [site.id]},
        "other_site_only": {"site_allow": ["site_someoneelse1234"]},
        "no_budget": {"funded": 0},
        "other_placement": {"placements": ["footer"]},
    }.get(case, {})
    campaign = await make_campaign(**fields)
    status = CreativeStatus.REVIEW if case == "creative_in_review" else CreativeStatus.APPROVED
    await make_creative(campaign, status=status)
    await rebuild_index(client.app)
    _, body = await get_serve(client, siteId=site.id, placement="sidebar")
    assert body == {"kind": "NONE"}


async def test_size_picks_a_matching_creative_or_nothing(client):
    site, campaign, _ = await banner_setup()
    leaderboard = await make_creative(campaign, width=728, height=90)
    await rebuild_index(client.app)
    _, body = await get_serve(client, siteId=site.id, size="728x90")
    assert body["ad"]["id"] == leaderboard.id
    _, body = await get_serve(client, siteId=site.id, size="160x600")
    assert body == {"kind": "NONE"}


async def test_attached_serves_unbudgeted_campaigns_with_clicks_off(client, settings, clock):
    site, _, _ = await banner_setup(funded=0)
    _, plain = await get_serve(client, siteId=site.id)
    assert plain == {"kind": "NONE"}
    _, body = await get_serve(client, siteId=site.id, attached="1")
    assert body["kind"] == "BANNER" and body["bannerClickActive"] is False
    claims = verify_token(body["ad"]["trackingToken"], secrets=(settings.tracking_secret,), now=clock.now())
    assert claims.click_active is False


async def test_attached_tasks_at_most_two_without_secrets_or_completed_ones(client, clock):
    site, campaign, _ = await banner_setup()
    quiz = await make_task(kind=TaskKind.QUIZ, campaign=campaign, config=QUIZ, now=clock.now())
    visit = await make_task(kind=TaskKind.VISIT_URL, campaign=campaign, config=VISIT,
                            now=clock.now() + timedelta(seconds=1))
    third = await make_task(kind=TaskKind.VISIT_URL, campaign=campaign, config=VISIT,
                            now=clock.now() + timedelta(seconds=2))
    await make_task(kind=TaskKind.VISIT_URL, campaign=campaign, config=VISIT, active=False)
    await rebuild_index(client.app)
    _, body = await get_serve(client, siteId=site.id, attached="1")
    tasks = body["attachedTasks"]
    assert [task["id"] for task in tasks] == [quiz.id, visit.id]
    assert tasks[0]["question"] == "2+2?" and tasks[0]["choices"] == ["3", "four-secret"]
    assert "answers" not in tasks[0] and "config" not in tasks[0]
    assert "four-secret" not in str({key: value for key, value in tasks[0].items() if key != "choices"})
    assert tasks[1]["visitUrl"].endswith(f"/api/tasks/{visit.id}/visit")

    wallet = wallet_address()
    await Completion.create(id="tc_done1234567890", task=quiz, wallet=wallet, fingerprint="fp", points=1,
                            gs_amount=0, created_at=clock.now())
    with recorded_statements() as queries:
        _, body = await get_serve(client, siteId=site.id, attached="1", wallet=wallet)
    assert [task["id"] for task in body["attachedTasks"]] == [visit.id, third.id]
    assert len(queries) == 1  # the one indexed completion lookup, only because a wallet was given
    _, without_attached = await get_serve(client, siteId=site.id, wallet=wallet)
    assert without_attached["attachedTasks"] == []


async def test_standalone_units_when_their_kind_is_asked(client):
    site = await make_site()
    poll = await make_task(kind=TaskKind.POLL, config=POLL)
    await rebuild_index(client.app)
    _, body = await get_serve(client, siteId=site.id, kind="POLL")
    assert body["kind"] == "POLL"
    assert body["task"]["id"] == poll.id and body["task"]["options"] == POLL["options"]
    _, banner_only = await get_serve(client, siteId=site.id)
    assert banner_only == {"kind": "NONE"}
    _, survey = await get_serve(client, siteId=site.id, kind="SURVEY,FEEDBACK")
    assert survey == {"kind": "NONE"}


async def test_mixed_kinds_draw_from_banners_and_units(client):
    site, _, _ = await banner_setup()
    await make_task(kind=TaskKind.POLL, config=POLL)
    await rebuild_index(client.app)
    kinds = set()
    for _ in range(40):
        _, body = await get_serve(client, siteId=site.id, kind="banner,POLL")
        kinds.add(body["kind"])
    assert kinds == {"BANNER", "POLL"}


async def test_changes_reach_the_index_on_refresh(client):
    site, campaign, _ = await banner_setup()
    _, body = await get_serve(client, siteId=site.id)
    assert body["kind"] == "BANNER"
    campaign.status = CampaignStatus.PAUSED
    await campaign.save()
    await rebuild_index(client.app)
    _, body = await get_serve(client, siteId=site.id)
    assert body == {"kind": "NONE"}


async def test_an_announced_change_rebuilds_the_index_in_the_background(app, client):
    site = await make_site()
    await rebuild_index(app)
    campaign = await make_campaign()
    await make_creative(campaign)
    changes.announce(campaign.id)  # no one listens here, outside the app's requests and jobs
    changes.listen(app.extensions["adnet"].serving.invalidate)  # as every request and job of the app does
    changes.announce(campaign.id)
    server = app.extensions["adnet"].serving
    await eventually(lambda: campaign.id in server.index.campaigns, "the campaign in the index")
    _, body = await get_serve(client, siteId=site.id)
    assert body["kind"] == "BANNER"


async def test_every_decision_is_counted_per_site_and_day(app, client, clock):
    site, _, _ = await banner_setup()
    empty_site = await make_site()
    for _ in range(3):
        await get_serve(client, siteId=site.id)
    for _ in range(2):
        await get_serve(client, siteId=site.id, size="1x1")
    await get_serve(client, siteId=empty_site.id, size="1x1")
    await app.extensions["adnet"].serving.flush_counts()
    await get_serve(client, siteId=site.id)
    await app.extensions["adnet"].serving.flush_counts()
    stat = await SiteDailyStat.get(site_id=site.id, day=clock.now().date())
    assert (stat.requests, stat.filled) == (6, 4)
    empty = await SiteDailyStat.get(site_id=empty_site.id, day=clock.now().date())
    assert (empty.requests, empty.filled) == (1, 0)


async def test_cors_preflight(client):
    response = await client.options("/api/serve", headers={
        "Origin": "https://publisher.example", "Access-Control-Request-Method": "GET"})
    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "GET" in response.headers["Access-Control-Allow-Methods"]
    assert "Access-Control-Allow-Credentials" not in response.headers


async def test_budget_spent_by_tracking_lowers_the_index(app, client):
    site, campaign, _ = await banner_setup(budget=2 * G, cpm=2000 * G)
    server = app.extensions["adnet"].serving
    server.spent(campaign.id, 2 * G)
    _, body = await get_serve(client, siteId=site.id)
    assert body == {"kind": "NONE"}
