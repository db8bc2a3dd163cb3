"""The consent rule (``adnet.delivery.consent.limitation``) on real TC and GPP strings.

The TC strings are real ones, with the values their publishers' tooling decoded (the seed data of the ``iab-tcf``
package's tests and the IAB's GPP reference library's tests); the GPP strings are those of the IAB's reference
library's tests (``iabgpp-es``), with the field values its tests set.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from adnet.delivery.consent import ConsentError, gpp_opted_out, gpp_string, limitation, tc_string

# A CMP's string (cmp 92): purpose 1 given; vendor 2 given, vendors 1 and 3 not; bit-field vendor encoding.
PURPOSE_1_GIVEN = (
    "COxR03kOxR1CqBcABCENAgCMAP_AAH_AAAqIF3EXySoGY2thI2YVFxBEIYwfJxyigMgChgQIsSwNQIeFLBoGLiAAHBGYJAQAGBAEEACBAQIkHGBM"
    "CQAAgAgBiRCMQEGMCzNIBIBAggEbY0FACCVmHkHSmZCY7064O__QLuIJEFQMAkSBAIACLECIQwAQDiAAAYAlAAABAhIaAAgIWBQEeAAAACAwAA"
    "gAAABBAAACAAQAAICIAAABAAAgAiAQAAAAGgIQAACBABACRIAAAEANCAAgiCEAQg4EAo4AAA")
# Another CMP's (cmp 2, French publisher): purpose 1 given; vendor 1 given, vendors 3 and 5 not.
PURPOSE_1_GIVEN_FR = (
    "CPIKj1vPPdzL-ACAnAFRBACsAP_AAH_AAAqIHFNf_X_fb3_j-_59_9t0eY1f9_7_v20zjgeds-8Nyd_X_L8X4mM7vB36pq4KuR4Eu3LBAQdlHOHc"
    "TUmw6IkVqTPsbk2Mr7NKJ7PEinMbe2dYGH9_n9XTuZKY79_s_z-v7_f_r-3_3_vp9V---wOJAJMNS-AizEscCSaNKoUQIQriQ6AEAFFCMLRNYQE"
    "rgp2VwEfoIGACA1ARgRAgxBRiyCAAAAAJKIgJADwQCIAiAQAAgBUgIQAEaAILACQMAgAFANCwAigCECQgyOCo5TAgIkWignkrAEou9jDCEMooAaB"
    "AAAAA.YAAAAAAAAAAA")
# Purpose 1 refused (purposes 2, 4, 5, 7-10 given), vendor 2 given, vendor 3 not.
PURPOSE_1_REFUSED = (
    "CG6MJgNIvJb0TAUAEBENAzCMAFvAAG7AAAJYGUlUcVlfByPiu55Ad8JQeAgftrYDE6QzDgEJs8wJQB9WxJwQpEMgKBX4BoIIiRYEsnLAAAYkHAF"
    "cDQAAQIkVqSCsYkyMCyFCJJJEghIKM2ZYGG0OkcVQIRAY4wMsHeYAA2OrevzrigZOQCYQFYAAkJQwEg0KRQIgQADAgUA4AIKEYUiSQ0JHBDMjAIN"
    "AAAAEBiAhAgAAgCgBgAAAgAASEBACACAgEAAAAgABACNAQgAAkAQSAEAQBAAKgIEgBEEEoAgBgMBACgAARIpFBIIDQgAWAAEAAwAPgArAB3AH4AT"
    "oA8QCEgEtAKSCgBwABABSAFwAXYAzAB_QFTBAEIACAAFAAcAA8AC0AGQAOwApgBzAD0AIaASoBLACaAGGAMgAewA-AB9gEIAI0AVAA4AB8gEVAI7"
    "ATEAmUBSIC2AF5AL-AYMAwggAJAAWAEEAWIBnADqAK-AW0AuABk4cAUAA4AEQAJwAkgDnAL8AtEBcQDIgGSBgB4AEgAngCJAHkARgAkwBKwCvAG8"
    "AOOAeoBJYCbAFigLoJQCAAKACIAI4AWkAxQBuAEXgJECQAwAKgKwAYeUAIAAXAAyACoALgAiwBJgCjAFKAVsBJACmwFbALkAXcAxkBkBSAKACAA"
    "GgA0gChgLtHAEAAUQBGAEcALAAmABsgDvAJaAdMBQgChwFLgKsAWyAxIBjEDHAMdGAAQAWEgBYAMQAhABMACgAG0ApoBZwFUgLxAXmAx4dAPAB5"
    "AEMARAAqgCEAFIANEAcQA_QCUgFiALyAYQA2gC7wGGlQAIATSYAIAKgCmRIAYALYAYgA3gFZANQAusWACADMAjoUAEADwAMoAfIBaBUAEARw0AIA"
    "JkAaoA4AEgjwBgArQBZQDjAOQAdYA8QDbAHtASiAq8BYgCyQF2BoA4AywBqAFLAKuAawBDYCdiEAUAb4BAwC5gHoAU0RADgEuAJwAV-A_YD-AIiA"
    "S8AvYRACAYEAwkA.IGVtd_X9fb2vj-_599_t0eY1f9_63t-wzjheNs-8NyZ_X_J4Xv2MyvB34pqYKmR4kunbBAQdtHGncTQgBwIlVqTLsYk2Mj"
    "zNKJ7JEmlsbe2dYGH9Pn8XT_ZKZ70-v___7v3______7oA")
# Purpose 1 refused, range-encoded vendor consents (vendor 1 given, 2 not).
RANGE_ENCODED = "CPSG_8APSG_8AAAAAAENAAFgAAAAAAAAAAAAFpQAwAAgCtAWkAAAAAAA.IFpQBQAAwAKAAsADoArQFpAA.YAAAAAAAAAAA"

USNAT_OPTED_OUT = "DBABLA~CVVVkkkkkpFY.YA"  # sale, sharing and targeted advertising opted out, GPC set
USNAT_DEFAULT = "DBABLA~CAAAAAAAAABA.QA"  # nothing opted out, GPC not set
USP_OPTED_OUT = "DBABTA~1YYN"
USP_NOT_OPTED_OUT = "DBABTA~1YNN"
# tcfeuv2, tcfcav1, uspv1 and every US state section, each with its defaults (nothing opted out).
EVERY_SECTION = (
    "DBACOcGA~CPSG_8APSG_8ANwAAAENAAFgAAAAAAAAAAAAAAAAAAAA.IAAA.YAAAAAAAAAAA~BPSG_8APSG_8AAAAAAENAACAAAAAAAAAAAAAAAAA"
    "AA.YAAAAAAAAAA~1---~BAAAAAAAAQA.QA~BAAAAABA.QA~BAAAABA~BAAAAEA.QA~BAAAAAQA~BAAAAAEA.QA~BAAAAABA~BAAAAABA.QA~BAAAA"
    "AABAA.QA~BAAAAAQA.QA~BAAAAAABAA.QA~BAAAAAQA.QA~BAAAAAQA.QA~BAAAAABA.QA~BAAAAAAAQA.QA~BAAAAAQA.QA~BAAAAAQA.QA~BQA"
    "A.QA~BQAA.AAA~BQAA.AAA~BQAA.AAA")


@dataclass(frozen=True)
class Signals:
    gdpr: bool | None = None
    gdpr_consent: str | None = None
    gpp: str | None = None
    gpp_sid: tuple[int, ...] | None = None


@pytest.mark.parametrize(("text", "purpose_1", "given", "refused"), [
    (PURPOSE_1_GIVEN, True, [2, 6, 8], [1, 3, 5]),
    (PURPOSE_1_GIVEN_FR, True, [1, 2, 4], [3, 5, 905 + 2]),
    (PURPOSE_1_REFUSED, False, [2, 4, 6], [1, 3, 5]),
    (RANGE_ENCODED, False, [1], [2, 723]),
])
def test_a_tc_string_is_read_where_the_rule_looks(text: str, purpose_1: bool, given: list[int],
                                                   refused: list[int]) -> None:
    decoded = tc_string(text)
    assert decoded.purpose_consent(1) is purpose_1
    assert [decoded.vendor_consent(vendor) for vendor in given] == [True] * len(given)
    assert [decoded.vendor_consent(vendor) for vendor in refused] == [False] * len(refused)


@pytest.mark.parametrize(("signals", "vendor_id", "reason"), [
    (Signals(), None, None),
    (Signals(gdpr=False), None, None),
    (Signals(gdpr=False, gdpr_consent=PURPOSE_1_REFUSED), None, None),  # GDPR does not apply: the string is not read
    (Signals(gdpr=True, gdpr_consent=PURPOSE_1_GIVEN), None, None),
    (Signals(gdpr=True, gdpr_consent=PURPOSE_1_GIVEN), 2, None),
    (Signals(gdpr=True, gdpr_consent=PURPOSE_1_GIVEN), 3, "tcf_vendor_refused"),
    (Signals(gdpr=True, gdpr_consent=PURPOSE_1_REFUSED), None, "tcf_purpose_1_refused"),
    (Signals(gdpr_consent=PURPOSE_1_REFUSED), None, "tcf_purpose_1_refused"),  # a string without gdpr is read
    (Signals(gdpr=True), None, "tcf_no_consent_string"),
    (Signals(gpp=USNAT_OPTED_OUT, gpp_sid=(7,)), None, "gpp_opt_out"),
    (Signals(gpp=USNAT_OPTED_OUT), None, "gpp_opt_out"),  # without gppSid every section applies
    (Signals(gpp=USNAT_OPTED_OUT, gpp_sid=(8,)), None, None),  # usnat does not apply
    (Signals(gpp=USNAT_OPTED_OUT, gpp_sid=(-1,)), None, None),
    (Signals(gpp=USNAT_DEFAULT, gpp_sid=(7,)), None, None),
    (Signals(gpp=USP_OPTED_OUT, gpp_sid=(6,)), None, "gpp_opt_out"),
    (Signals(gpp=USP_NOT_OPTED_OUT, gpp_sid=(6,)), None, None),
    (Signals(gpp=EVERY_SECTION), None, "tcf_purpose_1_refused"),  # its tcfeuv2 section refuses purpose 1
    (Signals(gpp=EVERY_SECTION, gpp_sid=tuple(range(6, 28))), None, None),
    (Signals(gdpr=True, gdpr_consent=PURPOSE_1_GIVEN, gpp=USP_OPTED_OUT), None, "gpp_opt_out"),
])
def test_the_rule(signals: Signals, vendor_id: int | None, reason: str | None) -> None:
    assert limitation(signals, vendor_id) == reason


def test_gpp_sections_and_opt_outs_are_read() -> None:
    every = gpp_string(EVERY_SECTION)
    assert sorted(every.sections) == [2, *range(5, 28)]
    assert not gpp_opted_out(every, None)
    assert gpp_opted_out(gpp_string(USNAT_OPTED_OUT), [7])
    # The GPC sub-segment alone opts out: the default usnat core with GPC set.
    assert gpp_opted_out(gpp_string("DBABLA~CAAAAAAAAABA.YA"), [7])


@pytest.mark.parametrize(("signals", "field"), [
    (Signals(gdpr=True, gdpr_consent="BOEFEAyOEFEAyAHABDENAI4AAAB9vABAASA"), "gdprConsent"),  # TCF v1
    (Signals(gdpr=True, gdpr_consent="CPSG_8APSG_8AAAAAA"), "gdprConsent"),  # truncated
    (Signals(gdpr=True, gdpr_consent="not a string"), "gdprConsent"),
    (Signals(gpp="DBABLA"), "gpp"),  # the header names a section it does not carry
    (Signals(gpp="AAAA~1YNN"), "gpp"),  # not a GPP header
    (Signals(gpp="DBABLA~C"), "gpp"),  # a usnat section too short to read
])
def test_a_string_that_cannot_be_decoded_is_refused(signals: Signals, field: str) -> None:
    with pytest.raises(ConsentError) as refused:
        limitation(signals, 2)
    assert refused.value.field == field
