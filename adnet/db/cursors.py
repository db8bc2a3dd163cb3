"""Cursors of paged listings: one codec for every route that pages.

A listing newest first pages by keyset: a page answers ``next``, the cursor of its last record, and the client
passes it back as ``before`` to read the records older than that one (``older_than``), however many were added
since. A cursor is the record's id (an opaque string to clients: they pass back what they got). Its shape is checked
where the request is parsed, before any query (``Cursor``): the listing's id prefix, ``_``, then 8 to 40 of the
characters adnet's ids are made of (``adnet.core.ids``). Anything else is 400 ``invalid_cursor`` naming the field,
and so is a well-formed cursor that names no record of the account (``unknown_cursor``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar, cast

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema
from tortoise.expressions import Q
from tortoise.models import Model
from tortoise.queryset import QuerySet

from adnet.core.errors import Invalid
from adnet.core.ids import ID_CHARACTERS, MAX_RANDOM, MIN_RANDOM, has_prefix
from adnet.core.inputs import rule

M = TypeVar("M", bound=Model)


class Listed(Protocol):
    """A record of a listing newest first: its id, and when it was made."""

    id: Any
    created_at: datetime


@dataclass(frozen=True)
class Cursor:
    """A cursor into a listing of ``prefix`` records, as a field: ``Annotated[str, Cursor("wd")]``, refused
    as ``invalid_cursor`` unless it is shaped as such an id; its JSON schema gives the pattern."""

    prefix: str

    def check(self, value: Any) -> str:
        if not isinstance(value, str) or not has_prefix(value, self.prefix):
            raise rule("invalid_cursor", f"the cursor a page answered as next (an id such as {self.prefix}_…)")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_before_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["pattern"] = f"^{self.prefix}_[{ID_CHARACTERS}]{{{MIN_RANDOM},{MAX_RANDOM}}}$"
        return json_schema


def next_cursor(page: Sequence[Listed], limit: int) -> str | None:
    """The cursor of the page after ``page`` (asked with ``limit``): its last record's, or None when it is the
    last page (shorter than asked)."""
    return str(page[-1].id) if page and len(page) == limit else None


def unknown_cursor(field: str = "before") -> Invalid:
    """The refusal of a well-formed cursor that names no record of the listing."""
    return Invalid("invalid_cursor", f"{field} names no record of this listing; pass a page's next as it came.",
                   field=field)


async def older_than(query: QuerySet[M], cursor: str | None, field: str = "before") -> QuerySet[M]:
    """``query`` (a listing newest first, by ``created_at`` then ``id``) narrowed to the records older than the one
    ``cursor`` names; the cursor must name a record of ``query`` itself (``unknown_cursor`` otherwise)."""
    if cursor is None:
        return query
    named = cast(Listed | None, await query.filter(id=cursor).first())
    if named is None:
        raise unknown_cursor(field)
    return query.filter(Q(created_at__lt=named.created_at) | Q(created_at=named.created_at, id__lt=named.id))
