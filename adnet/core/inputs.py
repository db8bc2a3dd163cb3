"""What a request may ask of the domain: command models, and the field types they share.

Every input is parsed once, into a command (a pydantic model): a JSON route gets it from quart-schema, a portal form
from ``portal.forms``, and the domain function takes it as it is. Outside, names are camelCase (``startsAt``);
inside, snake_case (``starts_at``).

A field that breaks one of adnet's rules fails with adnet's own code (``invalid_amount``, ``invalid_wallet`` …): a
``PydanticCustomError`` made by ``rule``. ``refusal`` turns a failed validation into the Invalid refusal that names
its first offending field, which the API and the portal both show; pydantic's own failures become
``missing_field`` or ``invalid_field``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date, datetime
from typing import Annotated, Any, ClassVar, TypeVar, cast
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from adnet.core.amounts import InvalidAmount, Token, parse_amount
from adnet.core.errors import Invalid
from adnet.core.ids import has_prefix
from adnet.core.wallets import InvalidWallet, normalize_wallet

MAX_FINGERPRINT_LENGTH = 128
TX_HASH = re.compile(r"^0x[0-9a-fA-F]{64}$")
MAX_URL_LENGTH = 2048
MAX_DIMENSION = 10_000
# Marks an error as one of adnet's rules, so ``refusal`` keeps its code.
_OWN = "adnet_rule"


def rule(code: str, message: str, *, at: str = "") -> PydanticCustomError:
    """A field's refusal under adnet's stable ``code`` (docs/errors.md), raised from a validator; ``at`` names the
    field when a model's validator raises it, or a part of the field (``answers`` of ``config``)."""
    return PydanticCustomError(code, message, {_OWN: True, "at": at})


def refusal(error: ValidationError) -> Invalid:
    """The refusal of a command that failed validation, about its first offending field (``field`` is its path,
    such as ``proof.optionId``)."""
    details = error.errors(include_url=False)
    if not details:
        return Invalid("invalid_request", "The request is not of the expected shape.")
    first = details[0]
    context = first.get("ctx") or {}
    field = ".".join([str(part) for part in first["loc"]] + ([context["at"]] if context.get("at") else [])) or None
    if field is None:
        return Invalid("invalid_request", "The request body is not a JSON object of the expected shape.")
    if context.get(_OWN):
        return Invalid(first["type"], f"{field}: {first['msg']}", field=field)
    if first["type"] == "missing":
        return Invalid("missing_field", f"{field}: this field is required", field=field)
    return Invalid("invalid_field", f"{field}: {_message(first['type'], context, first['msg'])}", field=field)


# pydantic's own failures, said as adnet's messages say them (its wording otherwise).
_MESSAGES = {
    "string_too_short": "at least {min_length} characters", "string_too_long": "at most {max_length} characters",
    "too_short": "at least {min_length} items", "too_long": "at most {max_length} items",
    "greater_than_equal": "at least {ge}", "less_than_equal": "at most {le}", "greater_than": "more than {gt}",
    "less_than": "less than {lt}", "int_parsing": "a whole number", "int_type": "a whole number",
    "int_from_float": "a whole number", "float_parsing": "a number", "float_type": "a number",
    "bool_parsing": "true or false", "bool_type": "true or false", "string_type": "a text", "list_type": "a list",
    "dict_type": "an object", "model_type": "an object", "extra_forbidden": "not a field of this request",
}
_TIME = "an ISO 8601 time with its zone, such as 2026-05-01T00:00:00Z"


def _message(kind: str, context: dict[str, Any], fallback: str) -> str:
    if kind == "string_too_short" and context.get("min_length") == 1:
        return "may not be empty"
    if kind in _MESSAGES:
        return _MESSAGES[kind].format(**context)
    if kind.startswith("datetime"):
        return _TIME
    if isinstance(context.get("error"), ValueError):
        return str(context["error"])
    return fallback


class Command(BaseModel):
    """A request to the domain, validated and immutable."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)
    # Fields (JSON names, dotted for one inside another) whose text the domain checks and never stores: the NUL
    # refusal of ``parse`` leaves them to that check, which answers with its own code (a sign-in message's
    # ``invalid_message``, a signature's ``invalid_signature``).
    UNSTORED_TEXT: ClassVar[frozenset[str]] = frozenset()


C = TypeVar("C", bound=Command)


def parse(command: type[C], data: Mapping[str, Any]) -> C:
    """``data``, written as JSON would be (camelCase names), as ``command``; Invalid naming the first offending field
    otherwise. No text anywhere in ``data`` may hold a NUL character (``\\u0000``), which PostgreSQL stores in no
    text or JSON column: it is refused here for every command, whichever database runs."""
    held = _nul_at(_without(data, command.UNSTORED_TEXT) if command.UNSTORED_TEXT and isinstance(data, Mapping)
                   else data)
    if held is not None:
        held = held or "body"
        raise Invalid("invalid_field", f"{held}: may not hold a NUL character (\\u0000)", field=held)
    try:
        return command.model_validate(data)
    except ValidationError as error:
        raise refusal(error) from None


def _without(data: Mapping[str, Any], paths: Iterable[str]) -> Mapping[str, Any]:
    """``data`` without the values at ``paths`` (dotted names; a path through something else than an object is
    left as it is)."""
    kept = dict(data)
    for path in paths:
        head, _, rest = path.partition(".")
        if head not in kept:
            continue
        if not rest:
            del kept[head]
        elif isinstance(kept[head], Mapping):
            kept[head] = _without(kept[head], (rest,))
    return kept


def _nul_at(value: Any) -> str | None:
    """Where in ``value`` (a JSON document's values and names) the first NUL character is, as a dotted path from
    ``value`` ("" for ``value`` itself, or a name in it); None when there is none. The path is written only once a
    NUL is found."""
    if isinstance(value, str):
        return "" if "\x00" in value else None
    items: Iterable[tuple[Any, Any]]
    if type(value) is dict or isinstance(value, Mapping):  # the ABC's check costs more than the common case
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        if isinstance(key, str) and "\x00" in key:
            return ""
        if type(item) is str:  # most of a body: decided here rather than in a call each
            if "\x00" in item:
                return str(key)
            continue
        if type(item) in _WITHOUT_TEXT:
            continue
        found = _nul_at(item)
        if found is not None:
            return f"{key}.{found}" if found else str(key)
    return None


_WITHOUT_TEXT = frozenset({int, float, bool, type(None)})


class Changes(Command):
    """A partial edit: only the fields given change (``changed``). A field given as null is refused unless it is in
    ``NULLABLE``, where null means "none" (an open end, no cap)."""

    NULLABLE: ClassVar[frozenset[str]] = frozenset()

    @field_validator("*", mode="before")
    @classmethod
    def _not_null(cls, value: Any, info: ValidationInfo) -> Any:
        if value is None and info.field_name not in cls.NULLABLE:
            raise rule("invalid_field", "may not be null")
        return value

    def changed(self) -> dict[str, Any]:
        """The fields given, by their snake_case names."""
        return {name: getattr(self, name) for name in self.model_fields_set}


# Field types -------------------------------------------------------------------------------------------------------

def _amount(value: Any) -> int:
    try:
        return parse_amount(value)
    except InvalidAmount as exc:
        raise rule("invalid_amount", str(exc)) from None


def _price(value: Any) -> int:
    try:
        return parse_amount(value, zero=True)
    except InvalidAmount as exc:
        raise rule("invalid_amount", str(exc)) from None


_AMOUNT_SCHEMA = {"type": "string", "pattern": r"^(0|[1-9][0-9]{0,21})(\.[0-9]{1,18})?$", "examples": ["12.5"]}
# A positive token amount, written as a decimal string ("12.5") and held in the smallest unit.
Amount = Annotated[int, BeforeValidator(_amount), WithJsonSchema(
    {**_AMOUNT_SCHEMA, "description": "a positive decimal amount with at most 18 decimals"})]
# A price or reward that may be "0".
Price = Annotated[int, BeforeValidator(_price), WithJsonSchema(
    {**_AMOUNT_SCHEMA, "description": "a decimal amount with at most 18 decimals, or 0"})]


def _token(value: Any) -> Token:
    if value not in Token.__members__.values():
        raise rule("invalid_token", f"one of {', '.join(Token)}")
    return Token(value)


# A token symbol of the vault: "G$" or "SOV".
TokenSymbol = Annotated[Token, BeforeValidator(_token)]


def _wallet(value: Any) -> str:
    try:
        return normalize_wallet(value)
    except InvalidWallet as exc:
        raise rule("invalid_wallet", str(exc)) from None


# A wallet address in any case (EIP-55 checked when mixed), held lower-case.
WalletAddress = Annotated[str, BeforeValidator(_wallet), WithJsonSchema(
    {"type": "string", "pattern": "^0x[0-9a-fA-F]{40}$", "examples": ["0x70997970C51812dc3A010C7d01b50e0d17dc79C8"]})]


def _fingerprint(value: Any) -> str:
    # Printable ASCII but the space: "!" to "~".
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_FINGERPRINT_LENGTH or not (
            value.isascii() and value.isprintable() and " " not in value):
        raise rule("invalid_field", f"1 to {MAX_FINGERPRINT_LENGTH} printable ASCII characters")
    return value


# A viewer's device fingerprint as the embed computes it.
Fingerprint = Annotated[str, BeforeValidator(_fingerprint), WithJsonSchema(
    {"type": "string", "minLength": 1, "maxLength": MAX_FINGERPRINT_LENGTH, "pattern": "^[!-~]+$"})]


def _tx_hash(value: Any) -> str:
    if not isinstance(value, str) or not TX_HASH.match(value):
        raise rule("invalid_tx_hash", "0x followed by 64 hexadecimal digits")
    return value.lower()


# A transaction hash, held lower-case.
TxHash = Annotated[str, BeforeValidator(_tx_hash), WithJsonSchema({"type": "string", "pattern": TX_HASH.pattern})]


def _zoned(value: datetime) -> datetime:
    if value.tzinfo is None:
        raise rule("invalid_field", _TIME)
    return value


# An instant: an ISO 8601 time with its zone.
Instant = Annotated[datetime, AfterValidator(_zoned)]


def _day(value: Any) -> date:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    try:
        if not isinstance(value, str) or len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise rule("invalid_date", "a day written YYYY-MM-DD") from None


# A calendar day, YYYY-MM-DD.
Day = Annotated[date, BeforeValidator(_day), WithJsonSchema({"type": "string", "format": "date"})]


def _size(value: Any) -> str:
    width, _, height = value.partition("x") if isinstance(value, str) else ("", "", "")
    if not (width.isdigit() and height.isdigit() and width[0] != "0" and height[0] != "0"
            and int(width) <= MAX_DIMENSION and int(height) <= MAX_DIMENSION):
        raise rule("invalid_field", "a size WIDTHxHEIGHT, such as 300x250")
    return f"{int(width)}x{int(height)}"


# A banner size, WIDTHxHEIGHT in pixels.
Size = Annotated[str, BeforeValidator(_size), WithJsonSchema(
    {"type": "string", "pattern": "^[1-9][0-9]*x[1-9][0-9]*$", "examples": ["300x250"]})]


def dimensions(size: str) -> tuple[int, int]:
    """``"300x250"`` (a valid ``Size``) → ``(300, 250)``."""
    width, _, height = size.partition("x")
    return int(width), int(height)


def _web_url(value: Any) -> str:
    """An absolute http or https URL with a host and no credentials (``https://good@evil`` misleads), without
    spaces or control characters."""
    problem = rule("invalid_url", "an absolute http:// or https:// URL with a host")
    if not isinstance(value, str) or not value or len(value) > MAX_URL_LENGTH or any(
            char.isspace() or ord(char) < 32 or ord(char) == 127 for char in value):
        raise problem
    try:
        parts = urlsplit(value)
        port_ok = parts.port is None or parts.port > 0
    except ValueError:
        raise problem from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or "@" in parts.netloc or not port_ok:
        raise problem
    return value


# A link or image address on the web.
WebUrl = Annotated[str, BeforeValidator(_web_url), WithJsonSchema(
    {"type": "string", "format": "uri", "maxLength": MAX_URL_LENGTH})]


def id_of(prefix: str) -> BeforeValidator:
    """The check of an adnet id with ``prefix`` (``site_…``), refused as ``invalid_field`` otherwise:
    ``Annotated[str, id_of("site")]``."""
    def check(value: Any) -> str:
        if not has_prefix(value, prefix):
            raise rule("invalid_field", f"an id such as {prefix}_…")
        return cast(str, value)

    return BeforeValidator(check)


MAX_UINT256 = 2**256 - 1


def _uint256(value: Any) -> int:
    if not (isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 78
            and int(value) <= MAX_UINT256):
        raise rule("invalid_amount", "a whole number in the token's or event's smallest unit, as a decimal string")
    return int(value)


# A uint256 of the chain (an amount in a token's own smallest unit, a token id), written as a decimal string.
Uint256 = Annotated[int, BeforeValidator(_uint256), PlainSerializer(str, return_type=str, when_used="json"),
                    WithJsonSchema({"type": "string", "pattern": "^[0-9]{1,78}$", "examples": ["1000000"]})]
Topic = Annotated[str, StringConstraints(to_lower=True, pattern=r"^0x[0-9a-fA-F]{64}$"), Field(
    description="the event's topic0: keccak-256 of its signature, such as Transfer(address,address,uint256)")]
