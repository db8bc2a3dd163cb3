"""The decision explainer under /api: why a campaign did or did not fill a slot, now or over the last hours
(``adnet.delivery.explainer``), for those who own the decision.

- An advertiser (SIWE session or API key with ``reports``; a member of the account as a viewer or above) asks about
  its own campaign on a site (``siteId``): the other campaigns are only counted.
- An operator (SIWE session of an operator wallet) asks about any campaign, with the same answer.
- A publisher asks about a slot of its own site: every campaign of the index, with the first rule that kept it out.

Each verdict carries its reason's code and the words of ``web.labels.DECISION_WORDS`` (the catalogue the portal and
the docs use). The tracking filter's reasons are told only to the site's owner, the campaign's advertiser and
operators.
"""

from __future__ import annotations

from quart import Blueprint, Response
from quart_rate_limiter import rate_limit
from quart_schema import document_response

from adnet.accounts.commands import ApiKeyScope
from adnet.accounts.models import MemberRole
from adnet.accounts.operators import check_operator
from adnet.accounts.sites import owned_site
from adnet.campaigns.campaigns import owned_campaign
from adnet.core.errors import Invalid
from adnet.delivery.commands import ExplainQuery
from adnet.delivery.explainer import CANDIDATE, Asker, Explanation, Verdict, answer
from adnet.services import Services
from api.http import answer as respond
from api.http import with_query
from api.schemas import Schema, refusals
from api.sessions import require_account, require_session
from web.labels import DECISION_WORDS
from web.limits import ACCOUNT_LIMIT
from web.sessions import current_wallet

blueprint = Blueprint("api_explainer", __name__, url_prefix="/api")

OTHERS = "other_campaigns"


class VerdictOut(Schema):
    """One campaign's part: ``reason`` (``candidate`` when every rule allows it; ``otherCampaigns`` for the
    campaigns the asker may not see, counted in ``decisions``) with its words; now, a candidate's ``chance`` of the
    draw; over a period, how often it was sampled, shown, and kept out by each reason."""

    campaign_id: str | None
    reason: str
    words: str
    chance: float | None = None
    decisions: int | None = None
    shown: int | None = None
    reasons: dict[str, int] | None = None


class ExplanationOut(Schema):
    """Why each campaign did or did not fill the slot: ``period`` now, or the last ``hours`` from ``samples`` sampled
    decisions."""

    site_id: str
    placement: str
    size: str | None
    country: str | None
    device: str | None
    period: str
    hours: int | None
    samples: int | None
    campaigns: list[VerdictOut]


def verdict_out(verdict: Verdict, *, now: bool) -> VerdictOut:
    reason = OTHERS if verdict.campaign_id is None else verdict.reason or CANDIDATE
    if now:
        return VerdictOut(campaign_id=verdict.campaign_id, reason=reason, words=DECISION_WORDS[reason],
                          chance=round(verdict.chance, 4) if reason == CANDIDATE else None,
                          decisions=verdict.decisions if verdict.campaign_id is None else None)
    return VerdictOut(campaign_id=verdict.campaign_id, reason=reason, words=DECISION_WORDS[reason],
                      decisions=verdict.decisions, shown=verdict.shown, reasons=verdict.reasons)


def explanation_out(explanation: Explanation) -> ExplanationOut:
    ask, now = explanation.ask, explanation.hours is None
    return ExplanationOut(site_id=explanation.site_id, placement=ask.placement, size=ask.size,
                          country=ask.country.upper() if ask.country else None, device=ask.device,
                          period="now" if now else "recent", hours=explanation.hours,
                          samples=None if now else explanation.samples,
                          campaigns=[verdict_out(verdict, now=now) for verdict in explanation.verdicts])


def _site_asked(ask: ExplainQuery) -> str:
    if ask.site_id is None:
        raise Invalid("invalid_field", "siteId: the site of the slot to explain", field="siteId")
    return ask.site_id


@blueprint.get("/advertisers/campaigns/<campaign_id>/explain")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ExplainQuery)
@document_response(ExplanationOut)
@refusals(400, 403, 404)
async def advertiser_explain(campaign_id: str, query_args: ExplainQuery, run: Services) -> Response:
    """Why the campaign would fill the slot ``siteId`` (with ``placement``, ``size``) for a viewer of ``country``,
    ``device``, ``os`` and ``keywords`` now, or did over the last ``hours`` of sampled decisions; the other
    campaigns only counted."""
    campaign = await owned_campaign(current_wallet(), campaign_id, MemberRole.VIEWER)
    asker = Asker(advertisers=frozenset({campaign.advertiser_id}))
    return respond(explanation_out(await answer(run.serving, query_args, _site_asked(query_args), asker,
                                                frozenset({campaign.id}))))


@blueprint.get("/operators/campaigns/<campaign_id>/explain")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_session
@with_query(ExplainQuery)
@document_response(ExplanationOut)
@refusals(400, 403, 404)
async def operator_explain(campaign_id: str, query_args: ExplainQuery, run: Services) -> Response:
    """An operator's question about any campaign: as the advertiser's, with every campaign's verdict."""
    check_operator(run.settings, current_wallet())
    return respond(explanation_out(await answer(run.serving, query_args, _site_asked(query_args),
                                                Asker(operator=True), frozenset({campaign_id}))))


@blueprint.get("/publishers/sites/<site_id>/explain")
@rate_limit(limits=ACCOUNT_LIMIT)
@require_account(ApiKeyScope.REPORTS)
@with_query(ExplainQuery)
@document_response(ExplanationOut)
@refusals(400, 403, 404)
async def publisher_explain(site_id: str, query_args: ExplainQuery, run: Services) -> Response:
    """Why each campaign would fill a slot of the site (``placement``, ``size``) for a viewer of ``country``,
    ``device``, ``os`` and ``keywords`` now, or did over the last ``hours`` of sampled decisions (the decisions
    that answered NONE are those where no campaign was shown)."""
    site = await owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    return respond(explanation_out(await answer(run.serving, query_args, site.id, Asker(site_owner=True))))
