"""The operators' review queue shows what it approves: each banner served by adnet (an http development banner
included) and nothing else (no other creative's, no address of the request's, no private address), each task in
words, each creative approved or rejected on its own with a reason the advertiser reads in the portal and the API;
a rejected creative never serves while its campaign's approved one does."""

from __future__ import annotations

import pytest

from adnet.accounts.fetching import Fetcher, FetchPolicy
from adnet.campaigns.models import Campaign, CampaignStatus, Creative, CreativeStatus
from adnet.campaigns.previews import MAX_PREVIEW_BYTES, MAX_VIDEO_PREVIEW_BYTES, BannerPreviews
from adnet.money import ledger
from adnet.tasks.choices import transfer_call
from adnet.tasks.models import Task, TaskKind
from tests.api.test_advertisers import serve
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import user
from tests.conftest import CDN_ADDRESS, rebuild_index
from tests.factories import G, make_advertiser, make_campaign, make_creative, make_site, make_task
from tests.images import png
from tests.portal import test_operator_pages
from tests.portal.conftest import portal_sign_in
from tests.portal.test_operator_pages import in_review, text
from tests.site_server import FileNetwork, http_response, resolver

# The operators' page's fixtures: settings naming the operator, the operator and another wallet signed in.
settings = test_operator_pages.settings
operator = test_operator_pages.operator
outsider = test_operator_pages.outsider


def banner_of(creative_id: str) -> str:
    return f"/portal/operator/creatives/{creative_id}/banner"


async def test_the_queue_shows_the_banner_from_adnet_and_fetches_it_once(operator, banner_cdn, clock):
    _, creative = await in_review(clock, banner_url="http://cdn.example/banner.png")
    page = await text(await operator.get("/portal/operator"))
    assert f'<img src="{banner_of(creative.id)}" width="300" height="250"' in page
    assert "Declared 300\N{MULTIPLICATION SIGN}250" in page and "<code>http://cdn.example/banner.png</code>" in page
    for _ in range(3):
        answer = await operator.get(banner_of(creative.id))
        assert answer.status_code == 200 and answer.mimetype == "image/png"
        assert await answer.get_data() == png(300, 250)
        assert "sandbox" in answer.headers["Content-Security-Policy"]
        assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert banner_cdn.requested == ["/banner.png"]  # held after the first fetch
    await Creative.filter(id=creative.id).update(banner_url="http://cdn.example/second.png",
                                                 updated_at=clock.now().replace(year=2031))
    assert (await operator.get(banner_of(creative.id))).status_code == 200
    assert banner_cdn.requested == ["/banner.png", "/second.png"]  # an edited banner is fetched again


async def test_the_banner_route_fetches_only_a_creative_in_review(operator, outsider, banner_cdn, clock):
    campaign, waiting = await in_review(clock)
    decided = await make_creative(campaign, status=CreativeStatus.REJECTED, now=clock.now(),
                                  banner_url="https://cdn.example/second.png")
    approved = await make_creative(await make_campaign(now=clock.now()), now=clock.now())
    refused = await operator.get(banner_of(approved.id))
    assert refused.status_code == 409 and "not_in_review" in await text(refused)
    assert (await operator.get(banner_of("ad_unknown12345"))).status_code == 404
    assert (await operator.get(banner_of("../../etc"))).status_code == 404
    asked = await operator.get(banner_of(waiting.id), query_string={"url": "http://169.254.169.254/"})
    assert asked.status_code == 200 and banner_cdn.requested == ["/banner.png"]  # the query names nothing
    assert (await outsider.get(banner_of(waiting.id))).status_code == 403
    video = await make_creative(await approved.campaign, banner_url="https://cdn.example/clip.mp4",
                                media_type="video", now=clock.now())
    assert (await operator.get(banner_of(video.id))).status_code == 409  # a video outside the queue neither
    assert banner_cdn.requested == ["/banner.png"]
    # The queue still shows a creative of a campaign in review once it is decided.
    assert (await operator.get(banner_of(decided.id))).status_code == 200
    await Campaign.filter(id=campaign.id).update(status=CampaignStatus.REJECTED)
    assert (await operator.get(banner_of(decided.id))).status_code == 409


# The first bytes of an MP4 (an ISO base media ``ftyp`` box) and of a WebM (an EBML header of doctype webm).
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + b"\x00" * 4000
WEBM = b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\xf7\x81\x01\x42\xf2\x81\x04\x42\xf3\x81\x08\x42\x82\x84webm" + (
    b"\x00" * 100)


@pytest.mark.parametrize(("body", "media_type"), [(MP4, "video/mp4"), (WEBM, "video/webm")])
async def test_the_queue_plays_a_video_from_adnet_in_ranges(operator, banner_cdn, clock, body, media_type):
    banner_cdn.serve("/clip", body)
    campaign, _ = await in_review(clock)
    video = await make_creative(campaign, status=CreativeStatus.REVIEW, banner_url="http://cdn.example/clip",
                                media_type="video", now=clock.now())
    page = await text(await operator.get("/portal/operator"))
    assert f'<video src="{banner_of(video.id)}" width="300" height="250"' in page
    assert "<code>http://cdn.example/clip</code>" in page
    whole = await operator.get(banner_of(video.id))
    assert (whole.status_code, whole.mimetype) == (200, media_type) and await whole.get_data() == body
    assert whole.headers["Accept-Ranges"] == "bytes" and "sandbox" in whole.headers["Content-Security-Policy"]
    part = await operator.client.get(banner_of(video.id), headers={"Range": "bytes=4-11"})
    assert part.status_code == 206 and await part.get_data() == body[4:12]
    assert part.headers["Content-Range"] == f"bytes 4-11/{len(body)}"
    assert banner_cdn.requested == ["/clip"]  # held after the first fetch


@pytest.mark.parametrize(("answer", "why"), [
    (http_response(200, png(300, 250)), "an image, not a video"),
    (http_response(200, b"\x00\x00\x00\x14ftypqt  " + b"\x00" * 100), "QuickTime, which browsers do not play"),
    (http_response(200, MP4[:40] + b"\x00" * MAX_VIDEO_PREVIEW_BYTES), "too large"),
])
async def test_a_video_that_is_not_a_small_playable_video_is_refused(operator, banner_cdn, clock, answer, why):
    banner_cdn.files["/odd"] = answer
    campaign, _ = await in_review(clock)
    video = await make_creative(campaign, status=CreativeStatus.REVIEW, banner_url="https://cdn.example/odd",
                                media_type="video", now=clock.now())
    refused = await operator.get(banner_of(video.id))
    assert refused.status_code == 400, why
    assert "did not answer an MP4, WebM or Ogg video of at most 8 MiB" in await text(refused), why


@pytest.mark.parametrize(("answer", "why"), [
    (http_response(200, b"<html>not an image</html>"), "not an image"),
    (http_response(404, b""), "not found"),
    (http_response(200, png(300, 250)[:20] + b"\0" * (MAX_PREVIEW_BYTES + 1)), "too large"),
    (http_response(302, b"", {"Location": "http://elsewhere.example/x.png"}), "a redirect to another host"),
])
async def test_a_banner_that_is_not_a_small_image_on_its_host_is_refused(operator, banner_cdn, clock, answer, why):
    banner_cdn.files["/odd.png"] = answer
    _, creative = await in_review(clock, banner_url="https://cdn.example/odd.png")
    refused = await operator.get(banner_of(creative.id))
    assert refused.status_code == 400 and "banner_unreachable" in await text(refused), why


@pytest.mark.parametrize("address", ["127.0.0.1", "10.0.0.5", "169.254.169.254", "::1"])
async def test_in_production_a_banner_on_a_private_address_is_never_fetched(operator, services, clock, address):
    network = FileNetwork()
    network.serve("/banner.png", png(300, 250))
    production = Fetcher(FetchPolicy.for_environment(production=True),
                         resolve=resolver({"cdn.example": [CDN_ADDRESS], "intranet.example": [address]}),
                         network=network)
    services.previews = BannerPreviews(production)
    _, inside = await in_review(clock, banner_url="https://intranet.example/banner.png")
    refused = await operator.get(banner_of(inside.id))
    assert refused.status_code == 400 and "not public" in await text(refused)
    _, plain = await in_review(clock, banner_url="http://cdn.example/banner.png", name="Plain")
    assert (await operator.get(banner_of(plain.id))).status_code == 400  # https only
    assert network.connected == []
    _, public = await in_review(clock, name="Public")
    assert (await operator.get(banner_of(public.id))).status_code == 200
    assert network.connected == [(CDN_ADDRESS, 443)]


async def test_each_task_reads_in_words(operator, chain, clock):
    campaign, _ = await in_review(clock)
    await make_task(kind=TaskKind.QUIZ, campaign=campaign, title="Token quiz",
                    config={"question": "Which token pays rewards?", "answers": ["G$"],
                            "choices": ["G$", "SOV", "ETH"]})
    recipient = user(5).address
    await make_task(kind=TaskKind.ONCHAIN_EVENT, campaign=campaign, title="Send",
                    config={"contract": chain.deployment.gs_token,
                            "eventTopic": "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
                            "call": transfer_call(recipient.lower(), G)})
    page = await text(await operator.get("/portal/operator"))
    assert "Quiz: “Which token pays rewards?” — answer G$ of G$, SOV, ETH." in page
    assert f"On-chain: Send G$ (a Transfer of the G$ token), 1 confirmation; the embed prepares a transfer of 1 G$ " \
           f"to {recipient}." in page
    assert "a9059cbb" not in page and "&#34;eventTopic&#34;" not in page


async def test_one_creative_is_rejected_and_the_other_serves(app, client, operator, clock):
    owner = user(2)
    campaign = await make_campaign(await make_advertiser(owner.address.lower()), status=CampaignStatus.REVIEW,
                                   now=clock.now())
    kept = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now())
    dropped = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now(),
                                  banner_url="https://cdn.example/other.png")
    no_reason = await operator.post(f"/portal/operator/creatives/{dropped.id}/reject", {"reason": " "}, htmx=True)
    assert no_reason.status_code == 400 and f'id="decide-{dropped.id}-error"' in await text(no_reason)
    rejected = await operator.post(f"/portal/operator/creatives/{dropped.id}/reject",
                                   {"reason": "The banner claims a guaranteed return."}, htmx=True)
    html = await text(rejected)
    assert f"Rejected the 300x250 creative of {campaign.name}." in html
    assert 'data-state="rejected">Rejected: The banner claims a guaranteed return.' in html
    assert f'id="decide-{kept.id}-reason"' in html and f'id="decide-{dropped.id}-reason"' not in html
    approved = await operator.post(f"/portal/operator/campaigns/{campaign.id}/approve")
    assert approved.status_code == 303
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.APPROVED
    assert {creative.id: creative.status for creative in await Creative.filter(campaign_id=campaign.id)} == {
        kept.id: CreativeStatus.APPROVED, dropped.id: CreativeStatus.REJECTED}

    site = await make_site()
    await rebuild_index(app)
    served = {(await serve(client, site))["ad"]["id"] for _ in range(25)}
    assert served == {kept.id}

    advertiser = await portal_sign_in(app.test_client(), owner)
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    assert '<span class="error" data-rejection>— The banner claims a guaranteed return.</span>' in page
    token = await sign_in(app.test_client(), owner)
    detail = await (await app.test_client().get(f"/api/advertisers/campaigns/{campaign.id}",
                                                headers=bearer(token))).get_json()
    assert {item["id"]: (item["status"], item["rejectionReason"]) for item in detail["creatives"]} == {
        kept.id: ("approved", ""), dropped.id: ("rejected", "The banner claims a guaranteed return.")}


async def test_one_task_is_rejected_its_pool_returns_and_it_never_serves(app, client, operator, clock):
    owner = user(2)
    advertiser = await make_advertiser(owner.address.lower())
    campaign = await make_campaign(advertiser, status=CampaignStatus.REVIEW, now=clock.now())
    await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now())
    quiz = {"question": "Which token?", "answers": ["G$"], "choices": ["G$", "SOV"]}
    kept = await make_task(kind=TaskKind.QUIZ, campaign=campaign, title="Kept quiz", config=quiz, now=clock.now())
    dropped = await make_task(kind=TaskKind.QUIZ, campaign=campaign, title="Dropped quiz", config=quiz, pool=2 * G,
                              now=clock.now())
    before = await ledger.balance(ledger.advertiser(advertiser.id))
    no_reason = await operator.post(f"/portal/operator/tasks/{dropped.id}/reject", {"reason": ""}, htmx=True)
    assert no_reason.status_code == 400 and f'id="decide-{dropped.id}-error"' in await text(no_reason)
    rejected = await operator.post(f"/portal/operator/tasks/{dropped.id}/reject",
                                   {"reason": "The quiz's answer is wrong."}, htmx=True)
    html = await text(rejected)
    assert "Rejected the task Dropped quiz." in html and "Rejected: The quiz&#39;s answer is wrong." in html
    assert f'id="decide-{kept.id}-reason"' in html and f'id="decide-{dropped.id}-reason"' not in html
    stored = await Task.get(id=dropped.id)
    assert (stored.active, stored.rejection_reason) == (False, "The quiz's answer is wrong.")
    assert await ledger.balance(ledger.task_pool(dropped.id)) == 0
    assert await ledger.balance(ledger.advertiser(advertiser.id)) == before + 2 * G
    again = await operator.post(f"/portal/operator/tasks/{dropped.id}/reject", {"reason": "Twice"})
    assert again.status_code == 409

    assert (await operator.post(f"/portal/operator/campaigns/{campaign.id}/approve")).status_code == 303
    site = await make_site()
    await rebuild_index(app)
    for _ in range(10):
        served = await serve(client, site, attached="1")
        assert [task["id"] for task in served["attachedTasks"]] == [kept.id]
    owner_page = await portal_sign_in(app.test_client(), owner)
    page = await text(await owner_page.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    assert "Rejected — The quiz&#39;s answer is wrong." in page
    token = await sign_in(app.test_client(), owner)
    detail = await (await app.test_client().get(f"/api/advertisers/campaigns/{campaign.id}",
                                                headers=bearer(token))).get_json()
    assert {item["id"]: (item["active"], item["rejectionReason"]) for item in detail["tasks"]} == {
        kept.id: (True, ""), dropped.id: (False, "The quiz's answer is wrong.")}


async def test_the_api_rejects_a_task_of_a_campaign_in_review_only(app, clock):
    campaign, _ = await in_review(clock)
    task = await make_task(kind=TaskKind.QUIZ, campaign=campaign,
                           config={"question": "Q?", "answers": ["a"]}, now=clock.now())
    live = await make_task(kind=TaskKind.QUIZ, campaign=await make_campaign(now=clock.now()),
                           config={"question": "Q?", "answers": ["a"]}, now=clock.now())
    token = await sign_in(app.test_client(), test_operator_pages.OPERATOR)
    api = app.test_client()
    refused = await api.post(f"/api/operators/tasks/{live.id}/reject", json={"reason": "No"}, headers=bearer(token))
    assert refused.status_code == 409 and (await refused.get_json())["error"] == "invalid_transition"
    done = await api.post(f"/api/operators/tasks/{task.id}/reject", json={"reason": "No"}, headers=bearer(token))
    assert done.status_code == 200
    assert await done.get_json() == {"taskId": task.id, "active": False, "rejectionReason": "No"}
    stranger = await sign_in(app.test_client(), user(3))
    assert (await api.post(f"/api/operators/tasks/{live.id}/reject", json={"reason": "No"},
                           headers=bearer(stranger))).status_code == 403
