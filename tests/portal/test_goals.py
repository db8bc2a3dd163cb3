"""Conversion goals in the portal: the campaign page lists a campaign's goals and adds one with the API's command
(``adnet.campaigns.goals.add_goal``), refusals said beside their field in people's words, nothing added on a
refusal; a submitted campaign shows its goals without the form, and the operators' review queue shows them."""

from __future__ import annotations

import re
from html import unescape as html_unescape

import pytest

from adnet.campaigns.models import CampaignStatus, ConversionGoal, GoalKind
from adnet.core.ids import new_id
from tests.conftest import make_settings
from tests.factories import EPOCH, G, make_advertiser, make_campaign
from tests.portal.conftest import portal_sign_in
from tests.portal.test_breakdowns import text_of
from tests.portal.test_operator_pages import OPERATOR

TOPIC = "0x" + "ab" * 32
CONTRACT = "0x" + "12" * 20


@pytest.fixture
def settings(database_url, data_dir):
    """Test settings with one operator wallet."""
    return make_settings(database_url, data_dir, ADNET_OPERATORS=OPERATOR.address)


async def draft(wallet: str, **fields):
    return await make_campaign(await make_advertiser(wallet), name="Spring sale", status=CampaignStatus.DRAFT,
                               **fields)


async def test_a_goal_added_with_the_form_is_listed(publisher):
    campaign = await draft(publisher.wallet)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    html = text_of(await (await publisher.get(f"{base}/goals")).get_data(as_text=True))
    assert 'id="no-goals">No goal yet.' in html and 'id="goal-form"' in html
    answer = await publisher.post(f"{base}/goals", {"name": "Purchase", "event": "purchase", "kind": "offchain",
                                                    "clickWindowDays": "14", "walletCap": "2", "cpa": "2.5",
                                                    "public": "1"}, htmx=True)
    assert answer.status_code == 200
    html = text_of(await answer.get_data(as_text=True))
    assert "Goal Purchase added; it is reviewed with the campaign." in html
    goal = await ConversionGoal.get(campaign_id=campaign.id)
    assert (goal.event, goal.kind, goal.click_window_days, goal.wallet_cap, int(goal.cpa), goal.public) == (
        "purchase", GoalKind.OFFCHAIN, 14, 2, 5 * G // 2, True)
    row = re.search(rf'<tr id="goal-{goal.id}">(.*?)</tr>', html, re.S).group(1)
    assert row == ('<th scope="row">Purchase<br><code class="small">purchase</code></th>'
                   '<td>reported by your server</td><td>14 days</td><td>2</td><td>2.5</td><td>yes</td>'
                   '<td>not reviewed yet</td>')
    # without htmx: 303 back to the page
    plain = await publisher.post(f"{base}/goals", {"name": "Sign-up", "event": "signup", "kind": "onchain",
                                                   "contract": CONTRACT, "topic0": TOPIC, "walletField": "topic1",
                                                   "clickWindowDays": "7", "walletCap": "1", "cpa": "0"})
    assert plain.status_code == 303
    onchain = await ConversionGoal.get(campaign_id=campaign.id, event="signup")
    assert (onchain.kind, onchain.contract, onchain.topic0, onchain.wallet_field, onchain.public) == (
        GoalKind.ONCHAIN, CONTRACT, TOPIC, "topic1", False)


async def test_refusals_are_said_beside_their_field_in_words(publisher):
    campaign = await draft(publisher.wallet)
    base = f"/portal/advertise/campaigns/{campaign.id}"
    cases = [({"name": "Purchase", "event": "Big Purchase!"}, "event", "The event's name in lower-case letters"),
             ({"name": "Purchase", "event": "purchase", "clickWindowDays": "40"}, "clickWindowDays",
              "A whole number of days from 1 to 30."),
             ({"name": "Purchase", "event": "purchase", "cpa": "-1"}, "cpa", "A G$ amount of 0 or more"),
             ({"name": "", "event": "purchase"}, "name", "A name of 1 to 120 characters."),
             ({"name": "Deposit", "event": "deposit", "kind": "onchain", "topic0": TOPIC, "walletField": "topic1"},
              "contract", "Contract: an onchain goal names its contract, topic0 and walletField."),
             ({"name": "Deposit", "event": "deposit", "kind": "onchain", "contract": "0x12", "topic0": TOPIC,
               "walletField": "topic1"}, "contract", "The contract's address: 0x and 40 hexadecimal digits.")]
    for form, field, words in cases:
        answer = await publisher.post(f"{base}/goals", form, htmx=True)
        assert answer.status_code == 400, form
        html = text_of(await answer.get_data(as_text=True))
        said = re.search(rf'<p id="goal-{field}-error" class="error field-error" role="alert">([^<]*)</p>', html)
        assert said is not None and html_unescape(said.group(1)).startswith(words), (form, said and said.group(1))
        assert re.search(rf'id="goal-{field}" name="{field}"[^>]*aria-invalid="true"', html), field
    assert await ConversionGoal.filter(campaign_id=campaign.id).count() == 0
    await publisher.post(f"{base}/goals", {"name": "Purchase", "event": "purchase"}, htmx=True)
    again = await publisher.post(f"{base}/goals", {"name": "Again", "event": "purchase"}, htmx=True)
    assert again.status_code == 409
    assert "This campaign already has a goal for that event." in await again.get_data(as_text=True)


async def test_a_submitted_campaign_lists_its_goals_without_the_form_and_operators_review_them(publisher, app):
    campaign = await draft(publisher.wallet)
    goal = await ConversionGoal.create(id=new_id("goal"), campaign=campaign, name="Deposit", event="deposit",
                                       kind=GoalKind.ONCHAIN, contract=CONTRACT, topic0=TOPIC, wallet_field="topic1",
                                       cpa=3 * G, created_at=EPOCH, updated_at=EPOCH)
    campaign.status = CampaignStatus.REVIEW
    await campaign.save(update_fields=["status"])
    html = text_of(await (await publisher.get(f"/portal/advertise/campaigns/{campaign.id}/goals")).get_data(
        as_text=True))
    assert f'<tr id="goal-{goal.id}">' in html and 'id="goal-form"' not in html
    assert "<td>3</td><td>no</td><td>in review</td>" in html
    refused = await publisher.post(f"/portal/advertise/campaigns/{campaign.id}/goals",
                                   {"name": "Late", "event": "late"}, htmx=True)
    assert refused.status_code == 409 and await ConversionGoal.filter(campaign_id=campaign.id).count() == 1
    operator = await portal_sign_in(app.test_client(), OPERATOR)
    queue = text_of(await (await operator.get("/portal/operator")).get_data(as_text=True))
    review = re.search(rf'<article class="review card" id="review-{campaign.id}">(.*?)</article>', queue, re.S).group(1)
    assert f'<tr id="goal-{goal.id}"><th scope="row">Deposit<br><code class="small">deposit</code></th>' in review
    assert re.search(rf"<code>{TOPIC}</code> of\s*<code>{CONTRACT}</code>, wallet in\s*<code>topic1</code>", review)
    assert "<td>3</td><td>no</td><td>in review</td>" in review
