"""The operators' page under /portal/operator: the review queue with a preview of every banner in its size box
(served by adnet, ``adnet.campaigns.previews``) and every task in words (``adnet.tasks.summaries``), approving and
rejecting each campaign and each creative with a reason, the vault's protocol rate, and platform revenue. The rules are
``adnet.campaigns.review``' and ``adnet.money.rate``'; only wallets in ``ADNET_OPERATORS`` see the page (403
``not_operator`` for others, as the API answers), and the layout links to it for them alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime
from typing import Any

from quart import Response, flash, render_template, request, url_for

from adnet.accounts.operators import check_operator
from adnet.campaigns import review
from adnet.campaigns.commands import Recategorization, Rejection
from adnet.campaigns.models import Campaign, Creative
from adnet.core.amounts import to_decimal_string
from adnet.core.errors import Conflict, DomainError, Invalid
from adnet.money import rate
from adnet.money.commands import NewRate
from adnet.reporting import revenue
from adnet.reporting.buckets import Granularity
from adnet.services import Services
from adnet.tasks import review as task_review
from adnet.tasks.choices import onchain_choices
from adnet.tasks.summaries import task_summary
from portal.dashboard import earnings_panel
from portal.pages import (
    account_form,
    account_page,
    form_error,
    page,
    part_of_page,
    portal_blueprint,
    see_other,
    wants_fragment,
)
from portal.views import Sent, form_view
from web.context import app_settings, injected
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("operators")

RATE_CHANGED = {"HX-Trigger": "rate-changed"}  # the rate panel reloads itself
# A banner served from adnet's origin: no script, style or request of its own runs, even opened as a page.
BANNER_HEADERS = {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; sandbox",
                  "Content-Disposition": "inline", "Cross-Origin-Resource-Policy": "same-origin",
                  "Accept-Ranges": "bytes"}

HOME = "/portal/operator"
# What is approved or rejected → the domain step, called with the operator, the item's id (and the rejection)
# and the time.
APPROVALS: dict[str, Callable[[str, str, datetime], Awaitable[Any]]] = {
    "campaigns": review.approve_campaign, "creatives": review.approve_creative}
REJECTIONS: dict[str, Callable[[str, str, Rejection, datetime], Awaitable[Any]]] = {
    "campaigns": review.reject_campaign, "creatives": review.reject_creative}


def _operator() -> str:
    return check_operator(app_settings(), current_wallet())


async def queue_context(run: Services, now: datetime, **extra: Any) -> dict[str, Any]:
    """The review queue: campaigns in review with their creatives and tasks (each task in words), then creatives
    waiting alone; ``waiting`` holds the ids of what the queue shows, whose forms show their own refusals."""
    queue = await review.review_queue(now)
    choices = onchain_choices(run.chain.deployment)
    summaries = {task.id: task_summary(task.kind, task.config, choices)
                 for item in queue.campaigns for task in item.tasks}
    waiting = {item.campaign.id for item in queue.campaigns} | {
        creative.id for item in queue.campaigns for creative in item.creatives} | {
        task.id for item in queue.campaigns for task in item.tasks} | {
        creative.id for creative in queue.creatives}
    return {"queue": queue, "task_summaries": summaries, "waiting": waiting, "values": {}, **extra}


async def operator_page_context(run: Services, now: datetime, **extra: Any) -> dict[str, Any]:
    """Everything the operators' page shows: the queue, the vault's rate and owner, and platform revenue."""
    current = await rate.vault_rate(run.chain)
    read: list[revenue.Revenue] = []

    async def earned(first: date, last: date, granularity: Granularity) -> list[tuple[date, int]]:
        read.append(await revenue.revenue(now, first, last, granularity))
        return read[0].days

    panel = await earnings_panel(run, _home(), "Platform earnings", "Platform G$ per day", earned,
                                 "The platform has earned nothing in these days yet.")
    return {**await queue_context(run, now), "rate": current.rate, "vault_owner": current.vault_owner,
            "revenue": read[0], **panel, "can_send": not run.settings.production and run.settings.embedded_chain,
            **extra}


@blueprint.get(HOME)
@account_page
@injected
async def operator_home(run: Services, now: datetime) -> tuple[str, int]:
    """The operators' page (403 ``not_operator`` for any other wallet); its earnings form asks for the earnings
    panel alone (htmx), answered 400 with the refusal beside the field for a range that is not one."""
    _operator()
    context = await operator_page_context(run, now)
    error = context["earnings_error"]
    return await page("portal/operator/home.html", "portal/_earnings.html", status_of(error) if error else 200,
                      **context)


def _home() -> str:
    return url_for("portal_operators.operator_home")


async def _decision_refused(error: DomainError, sent: Sent, item_id: str, **_: str) -> Response:
    return await form_error("portal/operator/_queue.html", "#review-queue", error, "portal/operator/home.html",
                            lambda: operator_page_context(sent.run, sent.now),
                            **await queue_context(sent.run, sent.now, values=sent.form.to_dict(),
                                                  failed_form=f"decide-{item_id}"))


async def _task_refused(error: DomainError, sent: Sent, task_id: str) -> Response:
    return await _decision_refused(error, sent, task_id)


@blueprint.post(f"{HOME}/<any(campaigns, creatives):kind>/<item_id>/<any(approve, reject):decision>")
@account_form
@form_view(_decision_refused, shows=(Invalid, Conflict))
async def operator_decide(sent: Sent, kind: str, item_id: str, decision: str) -> Response:
    """Approve a campaign in review (with its creatives) or a creative waiting alone, or reject it with a
    ``reason`` the advertiser sees; the queue is shown again."""
    operator = _operator()
    if decision == "approve":
        decided = await APPROVALS[kind](operator, item_id, sent.now)
    else:
        decided = await REJECTIONS[kind](operator, item_id, sent.command(Rejection), sent.now)
    message = f"{'Approved' if decision == 'approve' else 'Rejected'} {await _name_of(decided)}."
    if not wants_fragment():
        await flash(message)
        return see_other(_home())
    return Response(await render_template("portal/operator/_queue.html",
                                          **await queue_context(sent.run, sent.now, done=message)))


@blueprint.post(f"{HOME}/tasks/<task_id>/reject")
@account_form
@form_view(_task_refused, shows=(Invalid, Conflict))
async def operator_reject_task(sent: Sent, task_id: str) -> Response:
    """Reject one task of a campaign in review with a ``reason`` the advertiser sees; the queue is shown again."""
    task = await task_review.reject_task(_operator(), task_id, sent.command(Rejection), sent.now)
    message = f"Rejected the task {task.title}."
    if not wants_fragment():
        await flash(message)
        return see_other(_home())
    return Response(await render_template("portal/operator/_queue.html",
                                          **await queue_context(sent.run, sent.now, done=message)))


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/category")
@account_form
@form_view()
async def operator_recategorize(sent: Sent, campaign_id: str) -> Response:
    """Give a campaign in the queue the category it really has; the queue is shown again."""
    campaign = await review.recategorize_campaign(_operator(), campaign_id, sent.command(Recategorization), sent.now)
    message = f"{campaign.name} is filed under {campaign.category.value}."
    if not wants_fragment():
        await flash(message)
        return see_other(_home())
    return Response(await render_template("portal/operator/_queue.html",
                                          **await queue_context(sent.run, sent.now, done=message)))


async def _name_of(item: Campaign | Creative) -> str:
    """How a decided item is named to the operator: a campaign by its name, a creative by its size and campaign."""
    if isinstance(item, Campaign):
        return item.name
    campaign = await item.campaign
    return f"the {item.width}x{item.height} creative of {campaign.name}"


@blueprint.get(f"{HOME}/creatives/<creative_id>/banner")
@account_page
@injected
async def operator_banner(creative_id: str, run: Services) -> Response:
    """The banner of a creative in review, an image or a video, fetched by adnet (``adnet.campaigns.previews``), so
    the queue shows it whatever host and scheme it lives on; in byte ranges when asked (a ``<video>`` seeks with
    them); never cached by the browser (every signed-in answer is ``no-store``), and sandboxed should an SVG be
    opened on its own."""
    _operator()
    banner = await run.previews.banner(creative_id)
    answer = Response(banner.body, mimetype=banner.media_type, headers=BANNER_HEADERS)
    return await answer.make_conditional(request, accept_ranges=True, complete_length=len(banner.body))


@blueprint.get(f"{HOME}/rate")
@account_page
@injected
async def operator_rate_now(run: Services, now: datetime) -> tuple[str, int]:
    """The vault's rate now (the panel reloads itself once a new rate is set); opened directly, the operators'
    page."""
    _operator()
    return await part_of_page("portal/operator/_rate_now.html", "portal/operator/home.html",
                              lambda: operator_page_context(run, now), rate=(await rate.vault_rate(run.chain)).rate)


async def _rate_refused(error: DomainError, sent: Sent) -> Response:
    return await form_error("portal/operator/_rate_form.html", "#rate-form", error, "portal/operator/home.html",
                            lambda: operator_page_context(sent.run, sent.now), values=sent.form.to_dict(),
                            failed_form="rate")


@blueprint.post(f"{HOME}/rate")
@account_form
@form_view(_rate_refused, shows=(Invalid, Conflict))
async def operator_rate(sent: Sent) -> Response:
    """A new protocol rate: the unsigned ``setRate`` transaction for the vault's owner, or, with ``send`` on the
    development chain, the rate set now."""
    run, operator = sent.run, _operator()
    new = sent.command(NewRate)
    change = (await rate.send_rate(operator, run.chain, run.settings, new.rate) if new.send
              else await rate.rate_transaction(operator, run.chain, new.rate))
    if not wants_fragment():
        await flash(f"Rate {to_decimal_string(change.rate)} G$ per SOV: "
                    + (f"set by {change.tx_hash}." if change.tx_hash else "send the transaction from the owner."))
        return see_other(_home())
    return Response(await render_template("portal/operator/_rate_form.html", change=change, values={},
                                          can_send=not run.settings.production and run.settings.embedded_chain),
                    headers=RATE_CHANGED if change.tx_hash else {})
