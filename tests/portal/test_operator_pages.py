"""The operators' portal page through the Quart test client: only configured operators see it or act from it, the
review queue previews each banner at its size, approving and rejecting (with a reason) move exactly one campaign or
creative once, also when many decisions race; the protocol rate is set on the embedded chain; platform revenue
comes from the ledger; every form needs the CSRF token."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from eth_account import Account
from tortoise.transactions import in_transaction

from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus
from adnet.core.ids import new_id
from adnet.money import ledger
from adnet.money.rate import vault_rate
from tests.chain.helpers import user
from tests.conftest import make_settings
from tests.factories import EPOCH, G, make_advertiser, make_campaign, make_creative
from tests.portal.conftest import Publisher, portal_sign_in

OPERATOR = Account.from_key("0x" + "42" * 32)


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings with one operator wallet."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address)


@pytest.fixture
async def operator(client) -> Publisher:
    return await portal_sign_in(client, OPERATOR)


@pytest.fixture
async def outsider(app) -> Publisher:
    """A signed-in wallet that is not an operator (development account 3), on its own client."""
    return await portal_sign_in(app.test_client(), user(3))


async def in_review(clock, name: str = "Spring sale", **creative_fields) -> tuple[Campaign, Creative]:
    """A campaign waiting for review with one creative in review."""
    campaign = await make_campaign(status=CampaignStatus.REVIEW, name=name, now=clock.now())
    creative = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now(), **creative_fields)
    return campaign, creative


async def text(response) -> str:
    return await response.get_data(as_text=True)


async def test_only_operators_see_the_page_and_act_from_it(app, operator, outsider, clock):
    campaign, creative = await in_review(clock)
    anonymous = await app.test_client().get("/portal/operator")
    assert anonymous.status_code == 303 and anonymous.headers["Location"].startswith("/portal/signin?next=")
    refused = await outsider.get("/portal/operator")
    assert refused.status_code == 403 and "not_operator" in await text(refused)
    assert 'href="/portal/operator"' not in await text(await outsider.get("/portal/advertise"))
    for path, form in ((f"/portal/operator/campaigns/{campaign.id}/approve", {}),
                       (f"/portal/operator/campaigns/{campaign.id}/reject", {"reason": "No"}),
                       (f"/portal/operator/creatives/{creative.id}/approve", {}),
                       ("/portal/operator/rate", {"rate": "3", "send": "1"})):
        for htmx in (False, True):
            response = await outsider.post(path, form, htmx=htmx)
            assert response.status_code == 403 and "not_operator" in await text(response), (path, htmx)
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.REVIEW
    page = await operator.get("/portal/operator")
    assert page.status_code == 200 and 'href="/portal/operator">Operator</a>' in await text(page)


async def test_the_queue_previews_each_banner_in_its_size_box_and_escapes_advertiser_text(operator, clock):
    _, creative = await in_review(clock, name="<script>alert(1)</script>", description='"><img src=x onerror=alert(1)>')
    video_campaign = await make_campaign(status=CampaignStatus.APPROVED, now=clock.now())
    video = await make_creative(video_campaign, status=CreativeStatus.REVIEW, width=728, height=90,
                                banner_url="https://cdn.example/clip.mp4", media_type="video")
    html = await text(await operator.get("/portal/operator"))
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert(1)" not in html
    assert (f'<img src="/portal/operator/creatives/{creative.id}/banner" width="300" height="250" '
            'alt="&#34;&gt;&lt;img') in html
    assert "<code>https://cdn.example/banner.png</code>" in html
    assert f'<video src="/portal/operator/creatives/{video.id}/banner" width="728" height="90"' in html
    assert "Creatives changed on reviewed campaigns" in html


async def test_approving_a_campaign_approves_its_creatives_once(operator, clock):
    campaign, creative = await in_review(clock)
    other, _ = await in_review(clock, name="Other")
    fragment = await operator.post(f"/portal/operator/campaigns/{campaign.id}/approve", htmx=True)
    html = await text(fragment)
    assert f"Approved {campaign.name}." in html and f'id="review-{campaign.id}"' not in html
    assert f'id="review-{other.id}"' in html and html.lstrip().startswith('<div id="review-queue">')
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.APPROVED
    assert (await Creative.get(id=creative.id)).status == CreativeStatus.APPROVED
    assert (await Campaign.get(id=other.id)).status == CampaignStatus.REVIEW
    again = await operator.post(f"/portal/operator/campaigns/{campaign.id}/approve")
    assert again.status_code == 409 and "A campaign in approved cannot become approved." in await text(again)
    no_js = await operator.post(f"/portal/operator/campaigns/{other.id}/approve")
    assert no_js.status_code == 303 and no_js.headers["Location"] == "/portal/operator"
    assert f"Approved {other.name}." in await text(await operator.get("/portal/operator"))


async def test_a_rejection_needs_a_reason_and_the_advertiser_sees_it(operator, clock):
    campaign, _ = await in_review(clock)
    missing = await operator.post(f"/portal/operator/campaigns/{campaign.id}/reject", {"reason": "  "}, htmx=True)
    html = await text(missing)
    assert missing.headers["HX-Retarget"] == "#review-queue"
    assert f'id="decide-{campaign.id}-error"' in html and "a rejection needs a reason" in html
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.REVIEW
    rejected = await operator.post(f"/portal/operator/campaigns/{campaign.id}/reject",
                                   {"reason": "Landing page 404"}, htmx=True)
    assert f"Rejected {campaign.name}." in await text(rejected)
    stored = await Campaign.get(id=campaign.id)
    assert (stored.status, stored.rejection_reason) == (CampaignStatus.REJECTED, "Landing page 404")


async def test_the_operator_files_a_campaign_under_its_real_category(operator, clock):
    campaign, _ = await in_review(clock)
    queue = await text(await operator.get("/portal/operator"))
    assert f'action="/portal/operator/campaigns/{campaign.id}/category"' in queue
    assert '<option value="other" selected>' in queue
    fragment = await operator.post(f"/portal/operator/campaigns/{campaign.id}/category", {"category": "gambling"},
                                   htmx=True)
    html = await text(fragment)
    assert f"{campaign.name} is filed under gambling." in html and '<option value="gambling" selected>' in html
    assert (await Campaign.get(id=campaign.id)).category == Category.GAMBLING
    refused = await operator.post(f"/portal/operator/campaigns/{campaign.id}/category", {"category": "weapons"})
    assert refused.status_code == 400
    assert (await Campaign.get(id=campaign.id)).category == Category.GAMBLING


async def test_a_creative_waiting_alone_is_decided_alone(operator, clock):
    campaign = await make_campaign(status=CampaignStatus.APPROVED, now=clock.now())
    serving = await make_creative(campaign, now=clock.now())
    first = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now())
    second = await make_creative(campaign, status=CreativeStatus.REVIEW, now=clock.now())
    approved = await operator.post(f"/portal/operator/creatives/{first.id}/approve", htmx=True)
    assert approved.status_code == 200
    assert f"Approved the {first.width}x{first.height} creative of {campaign.name}." in await text(approved)
    reason = await operator.post(f"/portal/operator/creatives/{second.id}/reject", {"reason": "Misleading"})
    assert reason.status_code == 303
    statuses = {creative.id: (creative.status, creative.rejection_reason) for creative in await Creative.all()}
    assert statuses == {serving.id: (CreativeStatus.APPROVED, ""), first.id: (CreativeStatus.APPROVED, ""),
                        second.id: (CreativeStatus.REJECTED, "Misleading")}
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.APPROVED


async def test_concurrent_approvals_move_the_campaign_once(operator, clock):
    campaign, _ = await in_review(clock)
    responses = await asyncio.gather(*(
        operator.post(f"/portal/operator/campaigns/{campaign.id}/approve", htmx=True) for _ in range(12)))
    bodies = [await text(response) for response in responses]
    assert sum(f"Approved {campaign.name}." in body for body in bodies) == 1
    assert sum("cannot become approved" in body for body in bodies) == 11
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.APPROVED


async def test_the_rate_is_set_on_the_embedded_chain_or_prepared_for_the_owner(operator, chain):
    page = await text(await operator.get("/portal/operator"))
    assert 'id="rate-now">1 SOV = ' in page and 'name="send"' in page
    bad = await operator.post("/portal/operator/rate", {"rate": "-2"}, htmx=True)
    assert bad.headers["HX-Retarget"] == "#rate-form" and 'id="rate-error"' in await text(bad)
    prepared = await operator.post("/portal/operator/rate", {"rate": "3.5"}, htmx=True)
    html = await text(prepared)
    assert "Send this transaction from the vault" in html and chain.vault_address in html.lower()
    before = (await vault_rate(chain)).rate
    assert before != 7 * G // 2
    sent = await operator.post("/portal/operator/rate", {"rate": "3.5", "send": "1"}, htmx=True)
    assert "Rate set to 3.5 G$ per SOV by transaction" in await text(sent)
    assert (await vault_rate(chain)).rate == 7 * G // 2
    # the rate panel reloads itself once a rate is set, not when a transaction is only prepared
    assert sent.headers["HX-Trigger"] == "rate-changed" and "HX-Trigger" not in prepared.headers
    assert 'hx-trigger="rate-changed from:body"' in page
    panel = await text(await operator.get("/portal/operator/rate", htmx=True))
    assert panel.lstrip().startswith('<p id="rate-panel"') and 'id="rate-now">1 SOV = 3.5 G$' in panel


async def test_platform_revenue_comes_from_the_ledger(operator, clock):
    advertiser = await make_advertiser()
    campaign = await make_campaign(advertiser, now=EPOCH)
    async with in_transaction():
        await ledger.book("ad_billing", new_id("ltx"), [(ledger.campaign(campaign.id), -3 * G),
                                                        (ledger.platform("G$"), 3 * G)], now=clock.now())
    html = await text(await operator.get("/portal/operator"))
    assert 'id="revenue-balance">3 G$' in html and 'id="revenue-earned">3 G$' in html
    assert html.count('class="chart-bar"') >= 1


async def test_platform_revenue_is_charted_over_the_days_asked_for(operator, clock):
    campaign = await make_campaign(await make_advertiser(), now=EPOCH)
    now = clock.now()
    for amount, days_ago in ((G, 0), (4 * G, 40), (2 * G, 46)):
        async with in_transaction():
            await ledger.book("ad_billing", new_id("ltx"), [(ledger.campaign(campaign.id), -amount),
                                                            (ledger.platform("G$"), amount)],
                              now=now - timedelta(days=days_ago))
    first, last = (now - timedelta(days=45)).date(), (now - timedelta(days=35)).date()

    html = await text(await operator.get(f"/portal/operator?from={first}&to={last}"))
    assert f'<h2 id="chart-heading">Platform earnings, {first} to {last}</h2>' in html
    assert html.count('<rect class="chart-bar"') == 11 and "total 4 G$" in html
    assert 'id="revenue-earned">7 G$' in html and "<h1>Operator</h1>" in html  # lifetime stays lifetime
    assert 'action="/portal/operator" hx-get="/portal/operator"' in html

    panel = await operator.get(f"/portal/operator?from={first}&to={last}", htmx=True)
    fragment = await text(panel)
    assert panel.status_code == 200 and fragment.lstrip().startswith('<section id="earnings"')
    assert "<h1>" not in fragment and fragment.count('<rect class="chart-bar"') == 11

    refused = await operator.get(f"/portal/operator?from={last}&to={first}", htmx=True)
    fragment = await text(refused)
    assert refused.status_code == 400 and "To: the last day is before the first." in fragment
    assert 'id="earnings-to" name="to" value="' + str(first) + '"' in fragment
    assert "The platform has earned nothing in these days yet." not in fragment  # the default 30 days: 1 G$


async def test_every_operator_form_needs_the_csrf_token(operator, chain, clock):
    campaign, creative = await in_review(clock)
    rate = (await vault_rate(chain)).rate
    for path, form in ((f"/portal/operator/campaigns/{campaign.id}/approve", {}),
                       (f"/portal/operator/campaigns/{campaign.id}/reject", {"reason": "No"}),
                       (f"/portal/operator/creatives/{creative.id}/approve", {}),
                       (f"/portal/operator/creatives/{creative.id}/reject", {"reason": "No"}),
                       ("/portal/operator/rate", {"rate": "9", "send": "1"})):
        for htmx in (False, True):
            response = await operator.post(path, form, htmx=htmx, csrf=False)
            assert response.status_code == 403 and "csrf_failed" in await text(response), (path, htmx)
    assert (await Campaign.get(id=campaign.id)).status == CampaignStatus.REVIEW
    assert (await Creative.get(id=creative.id)).status == CreativeStatus.REVIEW
    assert (await vault_rate(chain)).rate == rate
