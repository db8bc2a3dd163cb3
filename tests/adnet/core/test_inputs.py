"""Inputs parse once, into commands, and a refusal names its field with adnet's own code."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, ClassVar

import pytest
from pydantic import Field

from adnet.core.amounts import UNIT, Token
from adnet.core.errors import DomainError, Invalid
from adnet.core.inputs import (
    Amount,
    Changes,
    Command,
    Day,
    Fingerprint,
    Instant,
    Price,
    Size,
    TokenSymbol,
    TxHash,
    WalletAddress,
    WebUrl,
    parse,
)


class Everything(Command):
    amount: Amount | None = None
    price: Price | None = None
    token: TokenSymbol | None = None
    wallet: WalletAddress | None = None
    fingerprint: Fingerprint | None = None
    starts_at: Instant | None = None
    day: Day | None = None
    size: Size | None = None
    url: WebUrl | None = None
    tx_hash: TxHash | None = None
    count: int | None = Field(None, ge=1)
    proof: dict[str, Any] | None = None


class Edit(Changes):
    NULLABLE: ClassVar[frozenset[str]] = frozenset({"ends_at"})

    name: str | None = None
    ends_at: Instant | None = None


def refused(data: dict[str, Any], command: type[Command] = Everything) -> tuple[str, str | None]:
    with pytest.raises(DomainError) as refusal:
        parse(command, data)
    assert isinstance(refusal.value, Invalid)
    return refusal.value.code, refusal.value.field


def test_values_come_out_in_their_canonical_form():
    wallet = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8"
    parsed = parse(Everything, {
        "amount": "12.5", "price": "0", "token": "SOV", "wallet": wallet, "fingerprint": "fp-1",
        "startsAt": "2026-05-01T00:00:00Z", "day": "2026-05-01", "size": "300x250", "url": "https://example.com/a",
        "txHash": "0x" + "AB" * 32})
    assert (parsed.amount, parsed.price, parsed.token) == (12 * UNIT + UNIT // 2, 0, Token.SOV)
    assert parsed.wallet == wallet.lower() and parsed.tx_hash == "0x" + "ab" * 32
    assert parsed.starts_at == datetime(2026, 5, 1, tzinfo=UTC) and parsed.day.isoformat() == "2026-05-01"


@pytest.mark.parametrize(("data", "code", "field"), [
    ({"amount": "0"}, "invalid_amount", "amount"),
    ({"amount": 12}, "invalid_amount", "amount"),  # amounts are decimal strings, never JSON numbers
    ({"price": "-1"}, "invalid_amount", "price"),
    ({"token": "ETH"}, "invalid_token", "token"),
    ({"wallet": "0x1234"}, "invalid_wallet", "wallet"),
    ({"wallet": "0x70997970c51812dc3A010C7d01b50e0d17dc79C8"}, "invalid_wallet", "wallet"),  # bad checksum
    ({"fingerprint": "é"}, "invalid_field", "fingerprint"),
    ({"fingerprint": "f" * 129}, "invalid_field", "fingerprint"),
    ({"fingerprint": "fp 1"}, "invalid_field", "fingerprint"),  # printable ASCII but the space
    ({"fingerprint": "fp\t1"}, "invalid_field", "fingerprint"),
    ({"fingerprint": "fp\x7f"}, "invalid_field", "fingerprint"),
    ({"startsAt": "2026-05-01T00:00:00"}, "invalid_field", "startsAt"),  # no zone
    ({"day": "2026-5-1"}, "invalid_date", "day"),
    ({"size": "0x250"}, "invalid_field", "size"),
    ({"url": "https://user@evil.example"}, "invalid_url", "url"),
    ({"url": "javascript:alert(1)"}, "invalid_url", "url"),
    ({"txHash": "0x12"}, "invalid_tx_hash", "txHash"),
    ({"count": 0}, "invalid_field", "count"),
    ({"proof": []}, "invalid_field", "proof"),
])
def test_a_bad_value_is_refused_with_its_code_and_field(data, code, field):
    assert refused(data) == (code, field)


@pytest.mark.parametrize(("data", "field"), [
    ({"fingerprint": "fp\x00"}, "fingerprint"),
    ({"proof": {"text": "bad\x00byte"}}, "proof.text"),
    ({"proof": {"answers": ["ok", "\x00"]}}, "proof.answers.1"),
    ({"proof": {"na\x00me": "value"}}, "proof"),
    ({"ignored\x00": 1}, "body"),
])
def test_no_text_anywhere_may_hold_a_nul_character(data, field):
    """PostgreSQL stores NUL in no text or JSON column: every command refuses it, naming where it is."""
    assert refused(data) == ("invalid_field", field)


@pytest.mark.parametrize("body", [[1], 48, "text", None])
def test_a_body_that_is_not_an_object_is_an_invalid_request(body):
    class Signed(Command):
        UNSTORED_TEXT: ClassVar[frozenset[str]] = frozenset({"signature"})
        signature: str

    assert refused(body) == ("invalid_request", None)
    assert refused(body, Signed) == ("invalid_request", None)  # a command with text it leaves to the domain


def test_a_missing_field_is_named():
    class Needs(Command):
        campaign_id: str

    assert refused({}, Needs) == ("missing_field", "campaignId")


def test_an_edit_changes_only_what_it_names_and_null_only_where_it_means_none():
    edit = parse(Edit, {"endsAt": None})
    assert edit.changed() == {"ends_at": None}
    assert parse(Edit, {}).changed() == {}
    assert refused({"name": None}, Edit) == ("invalid_field", "name")
