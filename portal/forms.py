"""Portal forms into commands: a form parses into the same command its JSON route takes, validated the same way.

A browser sends every field as text, so ``command_of`` first writes the form as the JSON the command reads, by
the type of each field: a one-line value is trimmed; an empty field is left out, or null where a partial edit
(``Changes``) allows none; a list is written separated by commas or spaces, or as several fields of one name
(checkboxes, a multiple select), or both; a ``datetime-local`` time, which has no zone, is UTC; a whole number is a
number; a JSON object field is JSON text; a checkbox is on when present; a field that is itself a command
(``targeting``) is the fields named with its prefix (``targeting.days``), given whole when any of them is present;
CR LF line ends (HTML's form encoding) become LF. Nothing else is decided here: a refusal is the command's own, the
Invalid error the API would answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from functools import cache
from typing import Any, TypeVar, cast, get_args

from werkzeug.datastructures import MultiDict

from adnet.core.errors import Invalid
from adnet.core.inputs import Changes, Command, parse
from adnet.reporting.buckets import Granularity
from adnet.reporting.commands import Period, ReportPeriod
from portal.words import in_words

C = TypeVar("C", bound=Command)
# A <input type="datetime-local"> value, which has no zone: the portal's times are UTC.
_LOCAL_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$")
_LIST_SEPARATORS = re.compile(r"[\s,]+")


def command_of(command: type[C], form: Mapping[str, str], **written: Any) -> C:
    """The ``command`` a form (or a query string) describes, with the fields in ``written`` already written as JSON
    (a task's config, written from its kind's fields); Invalid, naming the field, when it does not validate."""
    return parse(command, {**as_json(command, form), **written})


def days_asked(query: Mapping[str, str], today: date) -> tuple[date, date, Invalid | None]:
    """The first and last UTC day a report's ``from`` and ``to`` ask for; when they are not a range, the default
    range (the last 30 days) with the refusal, which the page shows beside the field it names."""
    try:
        first, last = command_of(Period, query).days(today)
    except Invalid as refused:
        first, last = Period.model_validate({}).days(today)
        return first, last, cast(Invalid, in_words(refused))
    return first, last, None


def report_asked(query: Mapping[str, str], today: date) -> tuple[date, date, Granularity, Invalid | None]:
    """``days_asked`` for a report that also counts per hour (``granularity``): when the query is refused, the last
    30 days per day, with the refusal."""
    try:
        asked = command_of(ReportPeriod, query)
        first, last = asked.days(today)
    except Invalid as refused:
        first, last = Period.model_validate({}).days(today)
        return first, last, Granularity.DAY, cast(Invalid, in_words(refused))
    return first, last, asked.granularity, None


def as_json(command: type[Command], form: Mapping[str, str]) -> dict[str, Any]:
    """The form's fields that ``command`` reads, under their names (``startsAt``), written as its JSON schema says."""
    nullable = command.NULLABLE if issubclass(command, Changes) else None
    data: dict[str, Any] = {}
    for key, shape in _shapes(command).items():
        if shape == "command":
            prefix = f"{key}."
            fields = MultiDict([(name.removeprefix(prefix), value) for name, value in _items(form)
                                if name.startswith(prefix)])
            nested = _nested(command, key)
            if fields and nested is not None:
                data[key] = as_json(nested, fields)
            continue
        if shape == "flag":
            if key in form:
                data[key] = form[key] not in ("", "0", "off", "false")
            continue
        if key not in form:
            continue
        text = form[key].replace("\r\n", "\n")
        text = text if "\n" in text else text.strip()
        if shape == "list":
            texts = form.getlist(key) if isinstance(form, MultiDict) else [text]
            data[key] = [item for value in texts for item in listed(value)]
        elif not text.strip():
            if nullable is not None:
                data[key] = None if _name_of(command, key) in nullable else text
        elif shape == "time":
            data[key] = f"{text}+00:00" if _LOCAL_TIME.match(text) else text
        elif shape == "number":
            data[key] = int(text) if text.isdigit() else text
        elif shape == "json":
            data[key] = _json(text)
        else:
            data[key] = text
    return data


def listed(text: str) -> list[str]:
    """The items of a list field, separated by commas or spaces."""
    return [item for item in _LIST_SEPARATORS.split(text.strip()) if item]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _items(form: Mapping[str, str]) -> list[tuple[str, str]]:
    return list(form.items(multi=True)) if isinstance(form, MultiDict) else list(form.items())


def _nested(command: type[Command], key: str) -> type[Command] | None:
    """The command a field of ``command`` holds (``Targeting`` for ``targeting``, also when it may be null), or
    None for a field of another type."""
    annotation = command.model_fields[_name_of(command, key)].annotation
    return next((kind for kind in (annotation, *get_args(annotation))
                 if isinstance(kind, type) and issubclass(kind, Command)), None)


def _name_of(command: type[Command], key: str) -> str:
    return next(name for name, field in command.model_fields.items() if (field.alias or name) == key)


@cache
def _shapes(command: type[Command]) -> dict[str, str]:
    """How each field of ``command`` is written in a form, by its JSON schema: command, flag, list, time, number,
    json or text."""
    shapes = {}
    for key, schema in command.model_json_schema()["properties"].items():
        options = [option for option in schema.get("anyOf", [schema]) if option.get("type") != "null"]
        if _nested(command, key) is not None:
            shapes[key] = "command"
            continue
        kind, form = (options[0].get("type"), options[0].get("format")) if options else (None, None)
        items = options[0].get("items", {}) if options else {}
        if kind == "array" and (items.get("type") in ("array", "object") or "oneOf" in items):
            kind = "object"  # a list of lists or objects (wallet audiences) is JSON text, not a list of words
        shapes[key] = {"boolean": "flag", "array": "list", "integer": "number", "object": "json"}.get(
            str(kind), "time" if form == "date-time" else "text")
    return shapes
