"""Proving a wallet for an impression, for view-through attribution: a conversion with no click, of a wallet proven
for a viewer whose billed impression of the campaign lies within the goal's view window.

adnet already proves two things, and a view binding is the two together, never a wallet string a page passes:

- the wallet: the viewer signed in for rewards on the publisher's page (SIWE, ``adnet.accounts.signin``), and the
  page holds that session's token (``static/sdk.js`` keeps it in the page's memory);
- the impression: its tracking token, which adnet signed when it served the ad to one client (its network and
  browser family, ``adnet.delivery.clients``) and which named the recorded impression (``token_ref``).

``POST /api/conversions/views``, with the rewards session as its bearer token and the impression's tracking token
in the body, from the client the ad was served to, while the token lives (15 minutes), binds the session's wallet to
the impression. The embed posts it after each recorded impression while the viewer is signed in for rewards. An
impression has one wallet, the first proven for it (its event id is the binding's key). Whether the impression was
billed is not said (the answer would tell a script which of its events were billed): the rules read it when a
conversion attributes through it (``click_filtered``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, TypeVar

from pydantic import Field, StringConstraints
from tortoise.exceptions import IntegrityError

from adnet.campaigns.models import ConversionGoal
from adnet.conversions.clicks import ClickClaims
from adnet.conversions.models import ClickBinding, ViewBinding
from adnet.core.errors import Conflict, Invalid
from adnet.core.inputs import Command
from adnet.delivery.models import EventType, TrackingEvent
from adnet.delivery.tokens import MAX_TOKEN_LENGTH, TokenError, token_ref, verify_token

log = logging.getLogger(__name__)

Touch = TypeVar("Touch", ClickBinding, ViewBinding)


class ViewProof(Command):
    """The tracking token of an impression the viewer's page recorded, which the rewards session's wallet saw."""

    tracking_token: Annotated[str, StringConstraints(min_length=1, max_length=MAX_TOKEN_LENGTH), Field(
        description="the impression's tracking token, as /api/serve handed it to the page")]


@dataclass(frozen=True)
class BoundView:
    """The impression's binding, and whether this request made it (False: the same wallet was proven before)."""

    binding: ViewBinding
    created: bool


async def bind_view(wallet: str, proof: ViewProof, client_binding: str, *, secrets: Sequence[str],
                    now: datetime) -> BoundView:
    """Prove ``wallet`` (a rewards or account session's) for the impression ``proof`` names. Invalid
    ``view_invalid`` for a token that is not live, was served to another client than ``client_binding`` (this
    request's), or names no recorded impression; Conflict ``view_already_bound`` when another wallet was proven for
    the impression first."""
    try:
        claims = verify_token(proof.tracking_token, secrets=secrets, now=now)
    except TokenError:
        claims = None
    impression = None
    if claims is not None and claims.client == client_binding:
        impression = await TrackingEvent.get_or_none(token_ref=token_ref(proof.tracking_token),
                                                     type=EventType.IMPRESSION)
    if impression is None:
        raise Invalid("view_invalid", "trackingToken names no impression recorded for this client in the last "
                                      "15 minutes.", field="trackingToken")
    try:
        binding = await ViewBinding.create(
            impression_event_id=impression.id, campaign_id=impression.campaign_id, site_id=impression.site_id,
            creative_id=impression.creative_id, wallet=wallet, seen_at=impression.received_at, bound_at=now)
    except IntegrityError:
        first = await ViewBinding.get(impression_event_id=impression.id)
        if first.wallet != wallet:
            raise Conflict("view_already_bound", "Another wallet was proven for this impression first.") from None
        return BoundView(first, created=False)
    log.info("view bound impression=%s campaign=%s", impression.id, impression.campaign_id)
    return BoundView(binding, created=True)


def last_touch(touches: Sequence[Touch], occurred_at: datetime, when: Callable[[Touch], datetime]) -> Touch:
    """Of a wallet's clicks or views (at least one), the one a conversion at ``occurred_at`` attributes to: the last
    at or before it, else the first after it (which the rules refuse as ``before_click``)."""
    before = [touch for touch in touches if when(touch) <= occurred_at]
    if before:
        return max(before, key=when)
    return min(touches, key=when)


async def view_claims(goal: ConversionGoal, wallet: str, occurred_at: datetime) -> ClickClaims | None:
    """What a conversion of ``wallet`` with no click attributes to when ``goal`` has a view window: the wallet's
    last impression of the goal's campaign at or before ``occurred_at`` (``last_touch``), as claims naming the
    impression's event; None without a view window or a view binding of the wallet for the campaign."""
    if goal.view_window_hours <= 0:
        return None
    views = await ViewBinding.filter(wallet=wallet, campaign_id=goal.campaign_id)
    if not views:
        return None
    view = last_touch(views, occurred_at, lambda binding: binding.seen_at)
    return ClickClaims(event_id=view.impression_event_id, campaign_id=view.campaign_id, ad_id=view.creative_id,
                       site_id=view.site_id, issued_at=view.seen_at)
