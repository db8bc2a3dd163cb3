"""The portal's form of each task kind: plain fields (an address and seconds, a message, an on-chain action from a
list, a question and its answers …) stored as the same config the API stores, and a refused value said next to its
field in words."""

from __future__ import annotations

import re

import pytest

from adnet.campaigns.models import Campaign
from adnet.tasks.choices import TRANSFER, event_topic, transfer_call
from adnet.tasks.models import Task, TaskKind
from tests.chain.helpers import user
from tests.portal.test_advertiser_pages import (  # noqa: F401 - settings is the fixture every test uses
    create,
    registered,
    settings,
    text,
)

COMMON = {"title": "Task", "description": "", "rewardPoints": "1", "rewardGs": "0", "maxPerWallet": "1"}


@pytest.fixture
async def advertiser(client):
    return await registered(client, user(2))


@pytest.fixture
async def campaign(advertiser, clock) -> Campaign:
    return await create(advertiser, clock)


async def add(advertiser, campaign: Campaign, kind: str, **fields: str):
    return await advertiser.post(f"/portal/advertise/campaigns/{campaign.id}/tasks",
                                 {**COMMON, "kind": kind, **fields}, htmx=True)


async def test_every_kind_has_its_own_form_of_plain_fields(advertiser, campaign):
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    for kind in TaskKind:
        assert f'<details id="new-{kind.value}">' in page
    assert 'name="config"' not in page and "JSON" not in page  # no config written as JSON
    assert 'id="new-VISIT_URL-url" name="url" type="url"' in page
    assert 'id="new-SIGN_MESSAGE-message" name="message"' in page
    assert '<option value="gs-transfer">Send G$ (a Transfer of the G$ token)</option>' in page


@pytest.mark.parametrize(("kind", "fields", "config"), [
    ("VISIT_URL", {"url": "https://example.com/landing", "dwellSeconds": "8"},
     {"url": "https://example.com/landing", "minDwellMs": 8000}),
    ("VISIT_URL", {"url": "https://example.com/", "dwellSeconds": ""},
     {"url": "https://example.com/", "minDwellMs": 5000}),
    ("SIGN_MESSAGE", {"message": "I like Example.\r\nWallet {wallet}\r\nNonce {nonce}"},
     {"message": "I like Example.\nWallet {wallet}\nNonce {nonce}"}),
    ("QUIZ", {"question": "2+2?", "answers": "4\r\nfour\r\n", "choices": "", "maxAttempts": "5"},
     {"question": "2+2?", "answers": ["4", "four"], "choices": [], "maxAttempts": 5}),
    ("POLL", {"question": "Which chain?", "options": "Celo\r\nEthereum\r\n\r\nRootstock"},
     {"question": "Which chain?", "options": [{"id": "1", "label": "Celo"}, {"id": "2", "label": "Ethereum"},
                                              {"id": "3", "label": "Rootstock"}]}),
    ("FEEDBACK", {"question": "How was it?", "ratingMax": "", "textMaxLength": "300"},
     {"question": "How was it?", "rating": None,
      "text": {"minLength": 0, "maxLength": 300, "required": False}}),
    ("SURVEY", {"q1": "Rate us", "q1Type": "rating", "q1Options": "", "q2": "", "q2Type": "single",
                "q3": "Which?", "q3Type": "multiple", "q3Options": "A\r\nB\r\n", "q4": "Why?", "q4Type": "text"},
     {"questions": [
         {"id": "q1", "type": "rating", "prompt": "Rate us", "required": True, "options": [], "min": 1, "max": 5,
          "maxLength": 1000},
         {"id": "q3", "type": "multiple", "prompt": "Which?", "required": True,
          "options": [{"id": "1", "label": "A"}, {"id": "2", "label": "B"}], "min": 1, "max": 5, "maxLength": 1000},
         {"id": "q4", "type": "text", "prompt": "Why?", "required": True, "options": [], "min": 1, "max": 5,
          "maxLength": 1000}]}),
])
async def test_a_kinds_fields_are_stored_as_its_config(advertiser, campaign, kind, fields, config):
    response = await add(advertiser, campaign, kind, **fields)
    assert "task Task added; it is reviewed with the campaign." in await text(response)
    task = await Task.get(campaign_id=campaign.id)
    assert (task.kind.value, task.config) == (kind, config)


async def test_the_onchain_action_is_picked_from_adnets_contracts(advertiser, campaign, chain):
    await add(advertiser, campaign, "ONCHAIN_EVENT", action="gs-transfer", confirmations="2")
    task = await Task.get(campaign_id=campaign.id)
    gs_token = chain.deployment.gs_token
    assert task.config == {"contract": gs_token, "eventTopic": event_topic(TRANSFER), "emitter": gs_token,
                           "confirmations": 2, "call": None}


@pytest.mark.parametrize(("kind", "fields", "field", "said"), [
    ("VISIT_URL", {"url": "example", "dwellSeconds": "5"}, "url",
     "Page to visit: an address such as https://example.com/landing."),
    ("VISIT_URL", {"url": "https://example.com/", "dwellSeconds": "7200"}, "dwellSeconds",
     "Seconds on the page: whole seconds from 1 to 3600."),
    ("SIGN_MESSAGE", {"message": "Sign me"}, "message",
     "Message to sign: a message of at most 1000 characters containing {nonce}."),
    ("ONCHAIN_EVENT", {"action": "steal-everything", "confirmations": ""}, "action",
     "Action: one of the actions in the list."),
    ("POLL", {"question": "Which?", "options": "Only one"}, "options",
     "Options: 2 to 10 options, one per line, each at most 200 characters."),
    ("SURVEY", {"q1": "Rate us", "q1Type": "rating", "q2": "Pick", "q2Type": "single", "q2Options": "Only one"}, "q2",
     "Question 2: a question of at most 500 characters; a choice question needs 2 to 20 options, one per line."),
    ("SURVEY", {"q1": "", "q1Type": "rating"}, "q1",
     "Question 1: a question of at most 500 characters; a choice question needs 2 to 20 options, one per line."),
])
async def test_a_refused_value_is_said_next_to_its_field(advertiser, campaign, kind, fields, field, said):
    html = await text(await add(advertiser, campaign, kind, **fields))
    rule = said.split(": ", 1)[1]  # the label is beside the field, the rule is said
    shown = re.search(rf'id="new-{kind}-{field}"[^>]*aria-invalid="true" aria-describedby="new-{kind}-{field}-error'
                      rf'[^>]*>(?:[^<]*</textarea>|(?:\s*<option[^>]*>[^<]*</option>)*\s*</select>)?\s*'
                      rf'<p id="new-{kind}-{field}-error" class="error field-error" role="alert">([^<]*)</p>', html)
    assert shown and shown.group(1) == rule[:1].upper() + rule[1:], html
    assert f'<details id="new-{kind}" open>' in html and f'id="new-{kind}-error"' not in html
    assert await Task.all().count() == 0


async def test_feedback_without_rating_or_text_says_so_at_the_forms_end(advertiser, campaign):
    html = await text(await add(advertiser, campaign, "FEEDBACK", question="How?", ratingMax="", textMaxLength=""))
    said = re.search(r'<p id="new-FEEDBACK-error" class="error" role="alert">([^<]*)</p>', html)
    assert said and said.group(1) == "Feedback needs a rating, a text, or both.", html
    assert await Task.all().count() == 0


async def test_a_quiz_whose_answer_is_not_among_its_choices_is_refused_by_the_server(advertiser, campaign):
    html = await text(await add(advertiser, campaign, "QUIZ", question="2+2?", answers="5", choices="3\n4",
                                maxAttempts=""))
    said = re.search(r'<p id="new-QUIZ-error" class="error" role="alert">([^<]*)</p>', html)
    assert said and said.group(1) == "One of the accepted answers must be among the choices.", html
    assert await Task.all().count() == 0
    accepted = await add(advertiser, campaign, "QUIZ", question="2+2?", answers="Four", choices="3\nfour",
                         maxAttempts="")
    assert accepted.status_code == 200 and await Task.all().count() == 1


async def test_what_the_server_refuses_is_said_and_checked_before_the_form_is_sent(advertiser, campaign):
    page = await text(await advertiser.get(f"/portal/advertise/campaigns/{campaign.id}/creatives"))
    message = re.search(r'<textarea id="new-SIGN_MESSAGE-message"[^>]*>', page)
    assert message and 'data-must-contain="{nonce}"' in message.group(0)
    assert 'aria-describedby="new-SIGN_MESSAGE-message-hint"' in message.group(0)
    assert re.search(r'id="new-SIGN_MESSAGE-message-hint">It must contain \{nonce\}', page)
    answers = re.search(r'<textarea id="new-QUIZ-answers"[^>]*>', page)
    assert answers and 'data-among="choices"' in answers.group(0)


async def test_a_send_action_can_prepare_the_transfer_the_embed_offers(advertiser, campaign, chain):
    recipient = "0x" + "ab" * 20
    await add(advertiser, campaign, "ONCHAIN_EVENT", action="gs-transfer", confirmations="", recipient=recipient,
              amount="0.01")
    task = await Task.get(campaign_id=campaign.id)
    assert task.config["call"] == transfer_call(recipient, 10**16)
    assert task.config["contract"] == chain.deployment.gs_token


@pytest.mark.parametrize("fields", [
    {"action": "gs-transfer", "recipient": "0x" + "ab" * 20, "amount": ""},
    {"action": "gs-transfer", "recipient": "nobody", "amount": "1"},
    {"action": "vault-deposit", "recipient": "0x" + "ab" * 20, "amount": "1"},
])
async def test_a_transfer_needs_a_send_action_an_address_and_an_amount(advertiser, campaign, fields):
    html = await text(await add(advertiser, campaign, "ONCHAIN_EVENT", confirmations="", **fields))
    assert ('<p id="new-ONCHAIN_EVENT-recipient-error" class="error field-error" role="alert">For a Send action, an '
            "address (0x and 40 hex digits) and an amount such as 0.01, both or neither.</p>") in html
    assert await Task.all().count() == 0
