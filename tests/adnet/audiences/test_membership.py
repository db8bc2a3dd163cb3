"""The serve-time rule of wallet audiences, as pure functions: groups, exclusions, not known, expiry, the injected
wallet signal; and audience passes, which a page cannot forge, stretch or move to another wallet."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adnet.audiences.membership import NO_AUDIENCE, Membership, compile_audience
from adnet.audiences.passes import issue_pass, wallet_of
from adnet.campaigns.targeting import Targeting

NOW = datetime(2026, 6, 1, tzinfo=UTC)
TOKEN = {"kind": "erc20", "contract": "0x" + "1" * 40, "minAmount": "5"}
NFT = {"kind": "erc721", "contract": "0x" + "2" * 40}
OLD = {"kind": "txCount", "min": 10}
INJECTED = {"kind": "injectedWallet"}
WALLET = "0x" + "ab" * 20


def audience(groups: list, exclude: list | None = None):
    targeting = Targeting.model_validate({"audienceGroups": groups, "audienceExclude": exclude or []})
    return compile_audience(targeting.audience_groups, targeting.audience_exclude), targeting


def key(rule: dict) -> str:
    return Targeting.model_validate({"audienceGroups": [[rule]]}).audience_groups[0][0].key


def member(matched: list[dict], evaluated: list[dict], *, expires_at: datetime = NOW + timedelta(hours=1)):
    return Membership(frozenset(key(rule) for rule in evaluated), frozenset(key(rule) for rule in matched), expires_at)


def test_any_group_whose_rules_all_hold_admits():
    compiled, _ = audience([[TOKEN, NFT], [OLD]])
    everything = [TOKEN, NFT, OLD]
    assert compiled.admits(member([TOKEN, NFT], everything), False, NOW)
    assert compiled.admits(member([OLD], everything), False, NOW)
    assert not compiled.admits(member([TOKEN], everything), False, NOW)
    assert not compiled.admits(member([], everything), False, NOW)


def test_the_group_told_is_the_first_that_holds_and_none_without_groups():
    compiled, _ = audience([[TOKEN, NFT], [OLD], [INJECTED]])
    everything = [TOKEN, NFT, OLD]
    assert compiled.group_of(member([TOKEN, NFT, OLD], everything), True, NOW) == 1
    assert compiled.group_of(member([OLD], everything), True, NOW) == 2
    assert compiled.group_of(member([TOKEN], everything), True, NOW) == 3
    assert compiled.group_of(member([OLD], everything, expires_at=NOW), True, NOW) == 3  # expired: not known
    assert NO_AUDIENCE.group_of(None, True, NOW) == 0
    assert audience([], [NFT])[0].group_of(member([], [NFT]), False, NOW) == 0  # exclusions only


def test_not_known_is_never_a_match_and_an_unknown_exclusion_refuses():
    compiled, _ = audience([[TOKEN]])
    assert not compiled.admits(None, True, NOW)  # no proven wallet
    assert not compiled.admits(member([], []), False, NOW)  # proven, rule not asked yet
    excluding, _ = audience([], [NFT])
    assert not excluding.admits(None, False, NOW)
    assert not excluding.admits(member([], [TOKEN]), False, NOW)  # asked other rules only
    assert excluding.admits(member([], [NFT]), False, NOW)
    assert not excluding.admits(member([NFT], [NFT]), False, NOW)


def test_an_expired_evaluation_counts_for_nothing():
    compiled, _ = audience([[TOKEN]])
    assert compiled.admits(member([TOKEN], [TOKEN]), False, NOW)
    assert not compiled.admits(member([TOKEN], [TOKEN], expires_at=NOW), False, NOW)


def test_the_injected_wallet_signal_needs_no_proven_wallet():
    compiled, _ = audience([[INJECTED]])
    assert compiled.admits(None, True, NOW)
    assert not compiled.admits(None, False, NOW)
    assert compile_audience([], []) is NO_AUDIENCE and NO_AUDIENCE.admits(None, False, NOW)


def test_the_same_rule_has_the_same_key_in_any_campaign_and_spelling():
    first = Targeting.model_validate({"audienceGroups": [[TOKEN]]}).audience_groups[0][0]
    again = Targeting.model_validate(Targeting.model_validate({"audienceGroups": [[{
        **TOKEN, "contract": TOKEN["contract"].upper().replace("0X", "0x")}]]}).stored()).audience_groups[0][0]
    assert first.key == again.key
    assert first.key != Targeting.model_validate({"audienceGroups": [[{**TOKEN, "minAmount": "6"}]]}) \
        .audience_groups[0][0].key


def test_a_pass_proves_its_wallet_until_it_expires_and_only_with_our_secret():
    audience_pass = issue_pass("secret", WALLET, NOW + timedelta(hours=1))
    assert wallet_of(audience_pass, secrets=("secret",), now=NOW) == WALLET
    assert wallet_of(audience_pass, secrets=("other", "secret"), now=NOW) == WALLET  # a rotated secret
    assert wallet_of(audience_pass, secrets=("other",), now=NOW) is None
    assert wallet_of(audience_pass, secrets=("secret",), now=NOW + timedelta(hours=1)) is None
    other_wallet = "cd" * 20 + audience_pass[40:]
    longer = audience_pass.replace(str(int((NOW + timedelta(hours=1)).timestamp())),
                                   str(int((NOW + timedelta(days=9)).timestamp())))
    for forged in (other_wallet, longer, WALLET, "", "x" * 500, audience_pass + "0"):
        assert wallet_of(forged, secrets=("secret",), now=NOW) is None
