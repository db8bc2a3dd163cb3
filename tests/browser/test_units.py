"""Standalone units in Chromium on /demo: a poll answered with the keyboard, a feedback with stars and text, and a
three-step survey that resumes where it was after a reload; each recorded once on the server."""

from __future__ import annotations

from typing import Any

from adnet.interactions.models import Interaction, SessionStatus, SurveySession
from tests.browser.conftest import LiveServer, Visitor


def interactions(server: LiveServer, unit_id: str, fingerprint: str) -> list[dict[str, Any]]:
    return server.call(lambda: Interaction.filter(unit_id=unit_id, fingerprint=fingerprint).values("answers"))


def open_unit(visitor: Visitor, server: LiveServer, slot: str) -> Any:
    visitor.page.goto(f"{server.url}/demo")
    unit = visitor.page.locator(f"#{slot}")
    unit.scroll_into_view_if_needed()
    visitor.page.wait_for_selector(f"#{slot}[data-adnet-unit]")
    return unit


def test_a_poll_is_answered_with_the_keyboard(server: LiveServer, visitor: Visitor) -> None:
    poll = open_unit(visitor, server, "slot-poll")
    (poll_id,) = server.demo["taskIds"]["POLL"]

    poll.get_by_role("button", name="Ethereum").focus()
    visitor.page.keyboard.press("Enter")
    poll.get_by_text("Thank you!").wait_for()

    fingerprint = visitor.page.evaluate("adnet.fingerprint()")
    assert interactions(server, poll_id, fingerprint) == [{"answers": {"optionId": "ethereum"}}]
    assert poll.get_by_text("Earned +10 points").is_visible()
    assert [event["status"] for event in visitor.events("interaction")] == ["recorded"]
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


def test_feedback_takes_stars_and_text(server: LiveServer, visitor: Visitor) -> None:
    feedback = open_unit(visitor, server, "slot-feedback")
    (feedback_id,) = server.demo["taskIds"]["FEEDBACK"]

    feedback.get_by_role("radio", name="4 of 5").click()
    feedback.get_by_label("Your comment (optional)").fill("Useful, <b>thanks</b>")
    feedback.get_by_role("button", name="Send").click()
    feedback.get_by_text("Thank you!").wait_for()

    fingerprint = visitor.page.evaluate("adnet.fingerprint()")
    assert interactions(server, feedback_id, fingerprint) == [{"answers": {"rating": 4,
                                                                           "text": "Useful, <b>thanks</b>"}}]
    assert visitor.console.errors() == [] and visitor.console.page_errors == []


def test_a_three_step_survey_resumes_after_a_reload(server: LiveServer, visitor: Visitor) -> None:
    survey = open_unit(visitor, server, "slot-survey")
    (survey_id,) = server.demo["taskIds"]["SURVEY"]
    fingerprint = visitor.page.evaluate("adnet.fingerprint()")

    assert survey.get_by_text("Question 1 of 3").is_visible()
    survey.get_by_label("MetaMask").check()
    survey.get_by_role("button", name="Next").click()
    survey.get_by_text("Question 2 of 3").wait_for()

    survey = open_unit(visitor, server, "slot-survey")
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
