"""The decision explainer on the portal's pages (``adnet.delivery.explainer``): a campaign's "Why it serves"
section for its advertiser, and the Traffic section of a site for its publisher. One form of a GET query (the slot,
the viewer, now or a recent period) and one table, in the words of ``web.labels.DECISION_WORDS``."""

from __future__ import annotations

from typing import Any

from quart import request

from adnet.accounts import sites
from adnet.core.errors import DomainError, Invalid
from adnet.delivery.commands import ExplainQuery
from adnet.delivery.explainer import Asker, answer
from adnet.services import Services
from portal.forms import command_of
from portal.words import in_words
from web.labels import DECISION_WORDS

# The form's fields, as the query string carries them ("site": a domain, on a campaign's page only).
FIELDS = ("site", "placement", "size", "country", "device", "hours")
# What the period picker offers: now, or the sampled decisions of the last day or week.
PERIODS = {"": "Now", "24": "Last 24 hours", "168": "Last 7 days"}


async def explanation_context(run: Services, asker: Asker, site_id: str | None = None,
                              campaign_ids: frozenset[str] | None = None) -> dict[str, Any]:
    """What the form and its table show for the page's query: nothing asked yet without ``explain`` in it; else the
    explanation for the slot (on ``site_id``, or the site whose domain ``site`` names) or the refusal, in words,
    beside the field it names."""
    values = {name: request.args.get(name, "") for name in FIELDS}
    context: dict[str, Any] = {"explain_values": values, "explain_periods": PERIODS,
                               "decision_words": DECISION_WORDS}
    if "explain" not in request.args:
        return context
    try:
        if site_id is None:
            site_id = await _site_of(values["site"])
        ask = command_of(ExplainQuery, request.args)
        context["explanation"] = await answer(run.serving, ask, site_id, asker, campaign_ids)
    except DomainError as refused:
        context["explain_error"] = in_words(refused)
    return context


async def _site_of(domain: str) -> str:
    """The site registered under ``domain`` (the first, when several wallets registered it)."""
    ids = (await sites.sites_of_domains([domain])).get(domain) if domain.strip() else None
    if not ids:
        raise Invalid("unknown_domain", "site: no site is registered under this domain; pick one from the list.",
                      field="site")
    return ids[0]
