"""The portal's form for each kind of task or unit: plain fields a person fills in (a page's address and seconds on
it, a message, an on-chain action from a list, a question and its answers, a survey's questions …) instead of the
config's JSON.

A form is only another way to write the config: ``config_of`` writes the fields as the config JSON the API takes,
and the task's command (``NewTask``) and its kind's config schema (``adnet.tasks.config``) validate it, exactly as
for the API. A refusal about the config names the config's field (``config.minDwellMs``); ``refusal`` names the
form's field instead, with what that field takes said in words, so the portal shows it next to that field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from adnet.core.amounts import InvalidAmount, parse_amount
from adnet.core.errors import Invalid
from adnet.core.wallets import InvalidWallet, normalize_wallet
from adnet.tasks.choices import OnchainChoice, transfer_call
from adnet.tasks.models import TaskKind
from portal.words import label_of
from web.labels import label

MILLISECONDS = 1000


@dataclass(frozen=True)
class TaskField:
    """One field of a kind's form: its ``name`` in the form, the config key it fills, how it is written
    (``shape``), and ``rule``, what it takes, said when it is refused."""

    name: str
    label: str
    config: str
    rule: str
    # text, url, textarea, lines, options, seconds, number, choice, rating, text-bounds, call, survey-prompt,
    # survey-type, survey-options
    shape: str = "text"
    hint: str = ""
    required: bool = True
    placeholder: str = ""
    # Checked in the browser before the form is sent, as the server will check it (``static/portal.js``): a text
    # the value must contain, and the field of the same form one of whose lines must be among this one's.
    must_contain: str = ""
    among: str = ""

    @property
    def checks(self) -> dict[str, str]:
        """The field's checks as the data attributes ``static/portal.js`` reads."""
        return {name: value for name, value in (("data-must-contain", self.must_contain),
                                                ("data-among", self.among)) if value}

    @property
    def multiline(self) -> bool:
        return self.shape in ("textarea", "lines", "options", "survey-options")


@dataclass(frozen=True)
class TaskForm:
    """The form of one kind: ``about`` (what a viewer does) and its fields; its ``name`` is the kind's own
    (``web.labels``)."""

    kind: TaskKind
    about: str
    fields: tuple[TaskField, ...]

    @property
    def name(self) -> str:
        return label(self.kind)

    @property
    def form_name(self) -> str:
        return f"new-{self.kind.value}"


SURVEY_QUESTIONS = 5
SURVEY_TYPES = {"single": "One choice", "multiple": "Several choices", "rating": "A rating from 1 to 5",
                "text": "Words"}
SURVEY_RULE = "a question of at most 500 characters; a choice question needs 2 to 20 options, one per line"


def _survey_question(number: int) -> tuple[TaskField, ...]:
    """The fields of a survey's ``number``-th question: its prompt, the kind of answer, a choice's options."""
    return (
        TaskField(f"q{number}", f"Question {number}", "questions", SURVEY_RULE, shape="survey-prompt",
                  required=number == 1, hint="Empty questions are left out." if number == 2 else ""),
        TaskField(f"q{number}Type", f"Answer to question {number}", "questions", SURVEY_RULE, shape="survey-type"),
        TaskField(f"q{number}Options", f"Options of question {number}", "questions", SURVEY_RULE,
                  shape="survey-options", required=False, hint="For a choice: one per line."),
    )


CALL_RULE = ("for a Send action, an address (0x and 40 hex digits) and an amount such as 0.01, both or neither")
QUESTION = TaskField("question", "Question", "question", "the question, 1 to 500 characters")
FORMS = (
    TaskForm(TaskKind.VISIT_URL, "The viewer opens your page through adnet's link and stays on it.", (
        TaskField("url", "Page to visit", "url", "an address such as https://example.com/landing", shape="url",
                  placeholder="https://example.com/landing"),
        TaskField("dwellSeconds", "Seconds on the page", "minDwellMs",
                  "whole seconds from 1 to 3600", shape="seconds", placeholder="5",
                  hint="How long the viewer stays before the task counts; 5 seconds when empty.", required=False),
    )),
    TaskForm(TaskKind.SIGN_MESSAGE, "The viewer's wallet signs your message (no transaction, no "
                                                      "gas).", (
        TaskField("message", "Message to sign", "message",
                  "a message of at most 1000 characters containing {nonce}", shape="textarea",
                  placeholder="I support Example.\nWallet: {wallet}\nNonce: {nonce}",
                  hint="It must contain {nonce}, which becomes a one-time number, so a signature cannot be reused; "
                       "{wallet} becomes the viewer's address.", must_contain="{nonce}"),
    )),
    TaskForm(TaskKind.ONCHAIN_EVENT, "The viewer's wallet sends a transaction that does the "
                                                           "action; adnet checks it on the chain.", (
        TaskField("action", "Action", "contract", "one of the actions in the list", shape="choice"),
        TaskField("confirmations", "Confirmations", "confirmations", "a whole number from 0 to 100",
                  shape="number", placeholder="1", required=False,
                  hint="Blocks on top of the transaction before it counts; 1 when empty."),
        TaskField("recipient", "Send to (address)", "call", CALL_RULE, shape="call", required=False,
                  placeholder="0x…", hint="For a Send action: the embed puts this transfer before the viewer's "
                                          "wallet. Empty: the viewer makes the transaction elsewhere."),
        TaskField("amount", "Amount to send", "call", CALL_RULE, shape="call", required=False, placeholder="0.01",
                  hint="In tokens, such as 0.01."),
    )),
    TaskForm(TaskKind.QUIZ, "The viewer answers your question; 3 tries unless you say otherwise.", (
        QUESTION,
        TaskField("answers", "Accepted answers", "answers", "1 to 20 answers, one per line, each at most 200 "
                                                          "characters", shape="lines",
                  hint="One per line; compared without case and surrounding spaces. Never shown to viewers. With "
                       "choices, one of them must be among the choices.", among="choices"),
        TaskField("choices", "Choices to pick from", "choices", "at most 10 choices, one per line", shape="lines",
                  required=False, hint="Optional, one per line: makes it multiple choice."),
        TaskField("maxAttempts", "Tries", "maxAttempts", "a whole number from 1 to 10", shape="number",
                  placeholder="3", required=False),
    )),
    TaskForm(TaskKind.POLL, "A unit of its own: the viewer picks one option.", (
        QUESTION,
        TaskField("options", "Options", "options", "2 to 10 options, one per line, each at most 200 characters",
                  shape="options", hint="One per line."),
    )),
    TaskForm(TaskKind.FEEDBACK, "A unit of its own: the viewer rates and/or writes a few words.", (
        QUESTION,
        TaskField("ratingMax", "Rating from 1 to", "rating", "a whole number from 2 to 10, or empty for no rating",
                  shape="rating", placeholder="5", required=False, hint="Empty for no rating."),
        TaskField("textMaxLength", "Longest text (characters)", "text",
                  "a whole number from 1 to 5000, or empty for no text", shape="text-bounds", placeholder="500",
                  required=False, hint="Empty for no text. At least one of rating and text."),
    )),
    TaskForm(TaskKind.SURVEY, "A unit of its own: several questions, answered one at a time.",
             tuple(field for number in range(1, SURVEY_QUESTIONS + 1) for field in _survey_question(number))),
)
_BY_KIND = {form.kind.value: form for form in FORMS}


def form_of(kind: Any) -> TaskForm:
    """The form of ``kind`` (a TaskKind value); Invalid naming ``kind`` for anything else."""
    if kind not in _BY_KIND:
        raise Invalid("invalid_field", f"kind: one of {', '.join(_BY_KIND)}", field="kind")
    return _BY_KIND[kind]


def config_of(form: TaskForm, values: Mapping[str, str], choices: list[OnchainChoice]) -> dict[str, Any]:
    """The config JSON ``values`` (the submitted form) describe, for the config schema to validate. A value that
    does not read as its shape is passed on as typed, so the schema refuses it under its field."""
    config: dict[str, Any] = {}
    transfer = [values.get(field.name, "").strip() for field in form.fields if field.shape == "call"]
    if any(transfer):
        config["call"] = _transfer(values.get("action", ""), *transfer)
    if form.kind is TaskKind.SURVEY:
        config["questions"] = [_survey_written(number, values) for number in _asked(values)]
    for field in form.fields:
        text = values.get(field.name, "").replace("\r\n", "\n")
        text = text if field.multiline else text.strip()
        if field.shape == "call" or field.shape.startswith("survey-"):
            continue
        if not text.strip() and field.shape not in ("rating", "text-bounds"):
            if field.required:
                config[field.config] = [] if field.shape in ("lines", "options") else ""
            continue
        config.update(_written(field, text, choices))
    return config


def _asked(values: Mapping[str, str]) -> list[int]:
    """The numbers of the survey's questions that have a prompt, in order."""
    return [number for number in range(1, SURVEY_QUESTIONS + 1) if values.get(f"q{number}", "").strip()]


def _survey_written(number: int, values: Mapping[str, str]) -> dict[str, Any]:
    kind = values.get(f"q{number}Type", "")
    question: dict[str, Any] = {"id": f"q{number}", "type": kind, "prompt": values[f"q{number}"].strip()}
    if kind in ("single", "multiple"):
        lines = [line.strip() for line in values.get(f"q{number}Options", "").splitlines() if line.strip()]
        question["options"] = [{"id": str(index), "label": label} for index, label in enumerate(lines, 1)]
    return question


def _transfer(action: str, recipient: str, amount: str) -> Any:
    """The ``call`` of a Send action's transfer; what the config schema refuses (under ``call``) when the action is
    not a transfer or a value does not read."""
    try:
        return transfer_call(normalize_wallet(recipient), parse_amount(amount)) if action.endswith("-transfer") \
            else recipient
    except (InvalidWallet, InvalidAmount):
        return recipient


def _written(field: TaskField, text: str, choices: list[OnchainChoice]) -> dict[str, Any]:
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    number: Any = int(text) if text.isdigit() else text
    if field.shape == "lines":
        return {field.config: lines}
    if field.shape == "options":
        return {field.config: [{"id": str(index), "label": label} for index, label in enumerate(lines, 1)]}
    if field.shape == "seconds":
        return {field.config: number * MILLISECONDS if isinstance(number, int) else text}
    if field.shape == "number":
        return {field.config: number}
    if field.shape == "choice":
        choice = next((choice for choice in choices if choice.key == text), None)
        return choice.config if choice else {field.config: text}
    if field.shape == "rating":
        return {field.config: {"min": 1, "max": number} if text else None}
    if field.shape == "text-bounds":
        return {field.config: {"maxLength": number} if text else None}
    return {field.config: text}


def refusal(form: TaskForm, error: Invalid, values: Mapping[str, str]) -> Invalid:
    """``error`` about the config, said about the form's field that fills the refused config key (a survey's
    question: its prompt), with what that field takes; any other refusal as it is. ``values`` is the form."""
    path = (error.field or "").split(".")
    if path[0] != "config":
        return error
    key = path[1] if len(path) > 1 else ""
    field = next((field for field in form.fields if field.config == key), None)
    asked = _asked(values)
    if key == "questions" and len(path) > 2 and path[2].isdigit() and int(path[2]) < len(asked):
        field = next(field for field in form.fields if field.name == f"q{asked[int(path[2])]}")
    if field is None and form.kind is TaskKind.ONCHAIN_EVENT:
        field = form.fields[0]  # the action fills contract, eventTopic and emitter together
    if field is None:  # a rule across the config's fields, in its own words (``portal.words.in_words``)
        message = error.message.removeprefix(f"{label_of(error.field or '')}: ")
        return Invalid(error.code, message[:1].upper() + message[1:])
    return Invalid(error.code, f"{field.label}: {field.rule}.", field=field.name)
