"""Consent signals of a publisher's page, and the rule that says when an event is consent-limited.

A page with a consent management platform carries an IAB TCF v2.2 consent string (EU) and/or a GPP string (US
states and others); the embed sends them with serve and track as ``gdpr`` (1/0: whether GDPR applies),
``gdprConsent`` (the TC string), ``gpp`` (the GPP string) and ``gppSid`` (the applicable GPP section ids). An event
is **consent-limited** when they do not allow adnet to keep a viewer id on the device (``limitation``):

- GDPR applies (``gdpr=1``, or a TC string is sent without ``gdpr``) and there is no TC string (neither
  ``gdprConsent`` nor an applicable ``tcfeuv2`` section of the GPP string): ``tcf_no_consent_string``;
- the TC string does not give consent to purpose 1 (store and/or access information on a device):
  ``tcf_purpose_1_refused``;
- ``ADNET_IAB_VENDOR_ID`` is set and the TC string does not give that vendor consent: ``tcf_vendor_refused``;
- an applicable US section of the GPP string says the viewer opted out of the sale or sharing of personal data or
  of targeted advertising, or carries a Global Privacy Control signal (its GPC sub-section), or the US Privacy
  section (``uspv1``) says opted out of sale: ``gpp_opt_out``.

What is read, and nothing more: of the TC string's core segment its version (2), the purpose-1 consent bit and the
vendor consent section (bit field or ranges); of the GPP string its header (type 3, version 1, the Fibonacci-coded
section ids), then, of each applicable section: ``tcfeuv2`` (2) as a TC string; ``uspv1`` (6) its third character;
the US national (7) and state sections (8-27) their ``SaleOptOut``, ``SharingOptOut`` and
``TargetedAdvertisingOptOut`` fields where the section has them (1 = opted out) and the GPC sub-segment. Other
sections are not decoded. ``PurposeOneTreatment`` is not honoured: purpose 1 needs its consent bit.

The decoder is adnet's own rather than a library's: the one Python package for TC strings (``iab-tcf``, released
last in 2022, and a re-packaging of it) decodes the whole string into per-bit dictionaries, which costs
milliseconds on the serve path for the two bits serving needs, and reads a truncated string as zeros instead of
refusing it; no package decodes GPP. A string that cannot be decoded is refused (``ConsentError``): the request
answers 400 ``invalid_consent`` naming the field, rather than being guessed at.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from adnet.core.errors import Invalid

MAX_CONSENT_LENGTH = 8192
MAX_GPP_SECTIONS = 64
# Characters of a TC string (base64url segments joined by ".") and of a GPP string (sections joined by "~").
TC_STRING = re.compile(r"^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$")
GPP_STRING = re.compile(r"^[A-Za-z0-9_.~-]+$")

TCF_EU_V2 = 2
USP_V1 = 6
# TC string core segment (TCF v2): where the purpose consents and the vendor consent section start.
_PURPOSE_CONSENTS = 152
_MAX_VENDOR_ID = 213
_VENDOR_ENCODING = 229
_VENDOR_FIELDS = 230
STORE_ON_DEVICE = 1  # purpose 1: store and/or access information on a device
# Bit offsets, in each US section's core segment, of its 2-bit SaleOptOut, SharingOptOut and
# TargetedAdvertisingOptOut fields (those it has), as the IAB's GPP section specifications lay them out.
_SALE_AND_TARGETED = (12, 14)
_US_OPT_OUTS: dict[int, tuple[int, ...]] = {
    7: (18, 20, 22),  # usnat
    8: (12, 14),  # usca: sale, sharing
    # sale, targeted advertising:
    **dict.fromkeys((9, 10, 12, 13, 14, 15, 16, 17, 19, 20, 21, 22, 23), _SALE_AND_TARGETED),
    **dict.fromkeys((11, 18), (14, 16)),  # usut, usia
    **dict.fromkeys((24, 25, 26, 27), (16, 18)),  # usmd, usin, usky, usri (MSPA fields first)
}
_OPTED_OUT = 1
_GPC_SUBSECTION = 1


class ConsentError(Invalid):
    """A consent string that cannot be decoded (``invalid_consent``); its ``field`` is ``gdprConsent`` or ``gpp``."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__("invalid_consent", message, field=field)


class Signals(Protocol):
    """What a request carries of the page's consent (``adnet.delivery.commands.ConsentSignals``)."""

    @property
    def gdpr(self) -> bool | None: ...
    @property
    def gdpr_consent(self) -> str | None: ...
    @property
    def gpp(self) -> str | None: ...
    @property
    def gpp_sid(self) -> tuple[int, ...] | None: ...


class _Bits:
    """The bits of one base64url segment, read by offset and width (most significant first)."""

    __slots__ = ("length", "shift", "value")

    def __init__(self, segment: str) -> None:
        raw = base64.urlsafe_b64decode(segment + "A" * (-len(segment) % 4))
        self.value = int.from_bytes(raw, "big")
        self.length = len(segment) * 6
        self.shift = len(raw) * 8

    def read(self, offset: int, width: int) -> int:
        if offset < 0 or offset + width > self.length:
            raise ValueError("the string ends too early")
        return (self.value >> (self.shift - offset - width)) & ((1 << width) - 1)

    def fibonacci(self, offset: int) -> tuple[int, int]:
        """The Fibonacci-coded integer at ``offset`` and the offset after it (its closing 1)."""
        value, weight, following, previous = 0, 1, 2, 0
        while True:
            bit = self.read(offset, 1)
            offset += 1
            if bit and previous:
                return value, offset
            value += weight if bit else 0
            weight, following, previous = following, weight + following, bit


@dataclass(frozen=True)
class TcString:
    """A TCF v2 consent string's core segment, read where asked."""

    bits: _Bits

    def purpose_consent(self, purpose: int) -> bool:
        return self.bits.read(_PURPOSE_CONSENTS + purpose - 1, 1) == 1

    def vendor_consent(self, vendor_id: int) -> bool:
        bits = self.bits
        if vendor_id > bits.read(_MAX_VENDOR_ID, 16):
            return False
        if not bits.read(_VENDOR_ENCODING, 1):
            return bits.read(_VENDOR_FIELDS + vendor_id - 1, 1) == 1
        offset = _VENDOR_FIELDS + 12
        for _ in range(bits.read(_VENDOR_FIELDS, 12)):
            is_range, start = bits.read(offset, 1), bits.read(offset + 1, 16)
            end = bits.read(offset + 17, 16) if is_range else start
            offset += 33 if is_range else 17
            if start <= vendor_id <= end:
                return True
        return False


def tc_string(text: str, field: str = "gdprConsent") -> TcString:
    """The TC string ``text``; ConsentError when it is not a TCF v2 string adnet can read."""
    if len(text) > MAX_CONSENT_LENGTH or not TC_STRING.match(text):
        raise ConsentError(field, "Not a TCF consent string: base64url segments joined by dots.")
    bits = _Bits(text.split(".", 1)[0])
    try:
        version = bits.read(0, 6)
        bits.read(0, _VENDOR_FIELDS)
    except ValueError:
        raise ConsentError(field, "The TCF consent string ends before its vendor consents.") from None
    if version != 2:
        raise ConsentError(field, "Not a TCF v2 consent string (its version is not 2).")
    return TcString(bits)


@dataclass(frozen=True)
class GppString:
    """A GPP string's sections by id (each as written, without the header)."""

    sections: dict[int, str]


def gpp_string(text: str) -> GppString:
    """The GPP string ``text`` split into its sections by id; ConsentError when its header cannot be read or names
    another number of sections than it carries."""
    if len(text) > MAX_CONSENT_LENGTH or not GPP_STRING.match(text):
        raise ConsentError("gpp", "Not a GPP string: base64url sections joined by '~'.")
    header, *sections = text.split("~")
    try:
        ids = _section_ids(_Bits(header.split(".", 1)[0]))
    except ValueError:
        raise ConsentError("gpp", "The GPP string's header cannot be read (type 3, version 1).") from None
    if len(ids) != len(sections):
        raise ConsentError("gpp", f"The GPP header names {len(ids)} sections and the string has {len(sections)}.")
    return GppString(dict(zip(ids, sections, strict=True)))


def _section_ids(bits: _Bits) -> list[int]:
    if bits.read(0, 6) != 3 or bits.read(6, 6) != 1:
        raise ValueError("not a GPP v1 header")
    ids: list[int] = []
    offset, last = 24, 0
    for _ in range(bits.read(12, 12)):
        is_range = bits.read(offset, 1)
        start, offset = bits.fibonacci(offset + 1)
        start += last
        end = start
        if is_range:
            end, offset = bits.fibonacci(offset)
            end += start
        if end - start + len(ids) >= MAX_GPP_SECTIONS:
            raise ValueError("too many sections")
        ids.extend(range(start, end + 1))
        last = end
    return ids


def gpp_opted_out(gpp: GppString, applicable: Iterable[int] | None) -> bool:
    """Whether an applicable section (all the string's when ``applicable`` is None) says the viewer opted out of
    the sale or sharing of personal data or of targeted advertising, or carries a GPC signal."""
    for section_id in gpp.sections if applicable is None else applicable:
        section = gpp.sections.get(section_id)
        if section is None:
            continue
        if section_id == USP_V1:
            if section[2:3].upper() == "Y":
                return True
            continue
        offsets = _US_OPT_OUTS.get(section_id)
        if offsets is None:
            continue
        core, *subsections = section.split(".")
        try:
            if any(_Bits(core).read(offset, 2) == _OPTED_OUT for offset in offsets):
                return True
            if any(_gpc(_Bits(segment)) for segment in subsections):
                return True
        except ValueError:
            raise ConsentError("gpp", f"The GPP string's section {section_id} cannot be read.") from None
    return False


def _gpc(bits: _Bits) -> bool:
    return bits.read(0, 2) == _GPC_SUBSECTION and bits.read(2, 1) == 1


def limitation(signals: Signals, vendor_id: int | None) -> str | None:
    """Why the event or request ``signals`` describe is consent-limited (the reasons of the module docstring), or
    None when the page's signals let adnet keep a viewer id (or it has none). ``vendor_id``: adnet's IAB vendor id
    (``ADNET_IAB_VENDOR_ID``), whose consent the TC string must also give when set. ConsentError for a string that
    cannot be decoded."""
    gpp = gpp_string(signals.gpp) if signals.gpp else None
    applicable = signals.gpp_sid
    consent = signals.gdpr_consent
    if not consent and gpp is not None and TCF_EU_V2 in gpp.sections and (applicable is None
                                                                            or TCF_EU_V2 in applicable):
        consent = gpp.sections[TCF_EU_V2]
    applies = signals.gdpr if signals.gdpr is not None else bool(consent)
    if applies:
        if not consent:
            return "tcf_no_consent_string"
        tc = tc_string(consent, "gdprConsent" if signals.gdpr_consent else "gpp")
        try:
            if not tc.purpose_consent(STORE_ON_DEVICE):
                return "tcf_purpose_1_refused"
            if vendor_id is not None and not tc.vendor_consent(vendor_id):
                return "tcf_vendor_refused"
        except ValueError:
            raise ConsentError("gdprConsent", "The TCF consent string ends inside its vendor consents.") from None
    if gpp is not None and gpp_opted_out(gpp, applicable):
        return "gpp_opt_out"
    return None
