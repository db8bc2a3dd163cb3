"""Why an ad was shown to a viewer, as the viewer may see it: the embed gives each banner's tracking token to its
"Why this ad?" link, and the viewer, signed in for rewards (a proven wallet), asks with it which of the campaign's
audience rule groups chose them (``adnet.delivery.tokens`` carries the group's number) and whether their own wallet
is in it. The answer tells the campaign's targeting in words and this wallet's own membership, never anything about
another viewer; a token lives ``adnet.delivery.tokens.TOKEN_TTL``, so it is about an ad shown recently."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from adnet.audiences.models import AudienceWallet
from adnet.campaigns.audiences import describe
from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import Targeting
from adnet.core.errors import Invalid
from adnet.delivery.tokens import TokenError, verify_token


@dataclass(frozen=True)
class WhyShown:
    """Why an ad was shown: the number of the campaign's audience rule group that admitted the viewer (0: none, the
    ad was not chosen by wallet audiences), its rules in words, and whether the signed-in wallet is in that group by
    its own evaluation now (so the answer is about this wallet, never another viewer)."""

    group: int
    rules: list[str]
    yours: bool


async def why_shown(wallet: str, tracking_token: str, *, secrets: tuple[str, ...], now: datetime) -> WhyShown:
    """Why the ad of ``tracking_token`` (a token the embed was given for it: genuine and from the last
    ``adnet.delivery.tokens.TOKEN_TTL``) was shown, as the viewer signed in with ``wallet`` may see it: the group
    the token names, in words, and whether ``wallet``'s own memberships hold it (Invalid ``token_invalid`` for a
    token that is not one, or too old). It tells the campaign's rules, which its ad already shows it targets, and
    nothing about who else saw the ad."""
    try:
        claims = verify_token(tracking_token, secrets=secrets, now=now)
    except TokenError:
        raise Invalid("token_invalid", "token: not a recent tracking token of adnet.", field="token") from None
    stored = cast(dict[str, Any] | None, await Campaign.filter(id=claims.campaign_id).first().values_list(
        "targeting", flat=True))
    if not claims.audience_group or not stored or not stored.get("audience_groups"):
        return WhyShown(group=0, rules=[], yours=False)
    targeting = Targeting.model_validate(stored)
    if claims.audience_group > len(targeting.audience_groups):
        return WhyShown(group=0, rules=[], yours=False)
    rules = targeting.audience_groups[claims.audience_group - 1]
    row = await AudienceWallet.get_or_none(wallet=wallet)
    known = row is not None and not row.opted_out and row.expires_at is not None and row.expires_at.astimezone(
        UTC) > now
    matched = known and row is not None and all(not item.on_chain or item.key in (row.matched or ()) for item in rules)
    return WhyShown(group=claims.audience_group, rules=[describe(item) for item in rules], yours=matched)
