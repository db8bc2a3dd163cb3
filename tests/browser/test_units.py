"""Standalone units in Chromium on a publisher's page of another origin than adnet: a poll answered with the
keyboard (and answered again from a fresh page, which adnet refuses as already answered), a feedback with stars and
text, and a three-step survey that resumes where it was after a reload; each recorded once on the server."""

from __future__ import annotations

from typing import Any

from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from tests.browser.conftest import LiveServer, PublisherSite, Visitor, publisher_page

SLOTS = {kind: f'<div id="slot-{kind.lower()}" data-adnet-slot data-kind="{kind}" data-placement="unit"></div>'
         for kind in ("POLL", "FEEDBACK", "SURVEY")}


def interactions(server: LiveServer, unit_id: str, fingerprint: str) -> list[dict[str, Any]]:
    return server.call(lambda: Interaction.filter(unit_id=unit_id, fingerprint=fingerprint).values("answers"))


def open_unit(visitor: Visitor, server: LiveServer, site: PublisherSite, kind: str) -> Any:
    page = publisher_page(visitor, server, site, SLOTS[kind])
    unit = page.locator(f"#slot-{kind.lower()}")
    unit.scroll_into_view_if_needed()
    page.wait_for_selector(f"#slot-{kind.lower()}[data-adnet-unit]")
    return unit


def test_a_poll_is_answered_with_the_keyboard(server: LiveServer, visitor: Visitor,
                                              publisher_site: PublisherSite) -> None:
    poll = open_unit(visitor, server, publisher_site, "POLL")
    (poll_id,) = server.demo["taskIds"]["POLL"]

    poll.get_by_role("button", name="Ethereum").focus()
    visitor.page.keyboard.press("Enter")
    poll.get_by_text("Thank you!").wait_for()

    fingerprint = visitor.page.evaluate("adnet.fingerprint()")
    assert interactions(server, poll_id, fingerprint) == [{"answers": {"optionId": "ethereum"}}]
    assert poll.get_by_text("Earned +10 points").is_visible()
    assert [event["status"] for event in visitor.events("interaction")] == ["recorded"]
    assert visitor.console.errors() == [] and visitor.console.page_errors == []

    again = open_unit(visitor, server, publisher_site, "POLL")  # a fresh page: adnet knows it was answered
    again.get_by_role("button", name="Celo").click()
    again.get_by_text("Thank you!").wait_for()
    assert interactions(server, poll_id, fingerprint) == [{"answers": {"optionId": "ethereum"}}]
    assert not again.get_by_text("The network did not answer", exact=False).is_visible()


def test_feedback_takes_stars_and_text(server: LiveServer, visitor: Visitor, publisher_site: PublisherSite) -> None:
    feedback = open_unit(visitor, server, publisher_site, "FEEDBACK")
    (feedback_id,) = server.demo["taskIds"]["FEEDBACK"]

    feedback.get_by_role("radio", name="4 of 5").click()
    feedback.get_by_label("Your comment (optional)").fill("Useful, <b>thanks</b>")
    feedback.get_by_role("button", name="Send").click()
    feedback.get_by_text("Thank you!").wait_for()

    fingerprint = visitor.page.evaluate("adnet.fingerprint()")
    assert interactions(server, feedback_id, fingerprint) == [{"answers": {"rating": 4,
                                                                           "text": "Useful, <b>thanks</b>"}}]
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


def test_a_three_step_survey_resumes_after_a_reload(server: LiveServer, visitor: Visitor,
                                                    publisher_site: PublisherSite) -> None:
    survey = open_unit(visitor, server, publisher_site, "SURVEY")
    (survey_id,) = server.demo["taskIds"]["SURVEY"]
    fingerprint = visitor.page.evaluate("adnet.fingerprint()")

    assert survey.get_by_text("Question 1 of 3").is_visible()
    survey.get_by_label("MetaMask").check()
    survey.get_by_role("button", name="Next").click()
    survey.get_by_text("Question 2 of 3").wait_for()

    survey = open_unit(visitor, server, publisher_site, "SURVEY")
    assert survey.get_by_text("Question 2 of 3").is_visible()
    assert survey.get_by_text("How much do you trust on-chain ads?").is_visible()
    survey.get_by_role("button", name="Back").click()
    assert survey.get_by_label("MetaMask").is_checked()
    survey.get_by_role("button", name="Next").click()
    survey.get_by_label("4", exact=True).check()
    survey.get_by_role("button", name="Next").click()
    survey.get_by_text("Question 3 of 3").wait_for()
    survey.get_by_role("textbox").fill("Answering surveys")
    survey.get_by_role("button", name="Finish").click()
    survey.get_by_text("Thank you!").wait_for()

    assert interactions(server, survey_id, fingerprint) == [
        {"answers": {"wallet": "metamask", "trust": 4, "wish": "Answering surveys"}}]
    sessions = server.call(lambda: SurveySession.filter(unit_id=survey_id, fingerprint=fingerprint).values("status"))
    assert sessions == [{"status": SessionStatus.COMPLETED}]
    assert visitor.page.evaluate("(id) => localStorage.getItem('adnet:survey:' + id)", survey_id) is None
    assert visitor.console.errors() == [] and visitor.console.page_errors == []
