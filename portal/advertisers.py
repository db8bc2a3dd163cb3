"""The advertiser's side of the portal under /portal/advertise: the account and its money, campaigns with their
creatives, tasks and units and conversion goals, their lifecycle, and their reports. The rules are
``adnet.accounts.advertisers``, ``adnet.campaigns``, ``adnet.tasks.authoring`` and ``adnet.reporting``; the session is
the same as on the publisher pages.

Money moves as on a site's page. A deposit is the approve and deposit transactions ``deposits.prepare``
builds, sent by the wallet through ``static/portal.js`` (the top-up flow), then polled until
``deposits.credit`` has credited it. A withdrawal is the claim ``withdrawals.withdraw`` signs, redeemed by the
wallet and confirmed by the watcher. Allocation moves unallocated G$ into a campaign's budget or a task's pool.

The campaign page is one fragment (``_campaign.html``): every form on it posts with htmx and gets the fragment back,
with the outcome at its top or the refusal beside the form that caused it; without JavaScript, the same forms post,
then 303 back to the page with a message, or show the page again with the refusal and its status.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, cast

from markupsafe import Markup
from quart import Response, flash, render_template, request, url_for
from werkzeug.datastructures import MultiDict

from adnet.accounts import advertisers, members, sites
from adnet.accounts.commands import AdvertiserRegistration
from adnet.accounts.models import Advertiser, AdvertiserMember
from adnet.audiences.reach import reach, rounded
from adnet.campaigns import campaigns, creatives, funding, goals, lifecycle, views
from adnet.campaigns.commands import (
    MAX_VIEW_WINDOW_HOURS,
    MAX_WALLET_CAP,
    MAX_WINDOW_DAYS,
    CampaignChanges,
    CreativeChanges,
    NewCampaign,
    NewCreative,
    NewGoal,
)
from adnet.campaigns.models import Campaign, GoalKind, MediaType
from adnet.core.amounts import Token, to_decimal_string
from adnet.core.errors import Conflict, DomainError, Invalid, NotFound
from adnet.delivery.explainer import Asker
from adnet.delivery.forecast import ForecastQuery, forecast, site_requests
from adnet.interactions import results
from adnet.money import activity, deposits, ledger, withdrawals
from adnet.money.commands import DepositReport, Funds, RedeemReport
from adnet.money.holders import advertiser_holder
from adnet.reporting import audiences as audience_reports
from adnet.reporting import breakdowns
from adnet.reporting import campaigns as campaign_reports
from adnet.reporting.balances import advertiser_balance
from adnet.reporting.buckets import Granularity, hourly_reach
from adnet.reporting.charts import earnings_chart, tally_chart
from adnet.reporting.commands import Dimension, Period, ReportPeriod
from adnet.services import Services
from adnet.tasks import authoring, drafts
from adnet.tasks.choices import onchain_choices
from adnet.tasks.commands import NewTask
from portal import task_forms
from portal.explainer import explanation_context
from portal.forms import command_of, listed, report_asked
from portal.pages import (
    account_form,
    account_page,
    form_error,
    form_idempotency_key,
    page,
    part_of_page,
    portal_blueprint,
    see_other,
    wants_fragment,
)
from portal.site_settings import confirmed
from portal.targeting import audience_summary, targeting_form, week_hours_summary, written_schedule
from portal.views import Refused, Sent, form_view
from portal.zones import viewer_zone
from web.context import injected
from web.csv import csv_file, report_file
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("advertisers")
blueprint.add_app_template_global(targeting_form, "targeting_form")
blueprint.add_app_template_global(audience_summary, "audience_summary")
blueprint.add_app_template_global(week_hours_summary, "week_hours_summary")

BALANCE_CHANGED = {"HX-Trigger": "balance-changed"}
HOME = "/portal/advertise"
ACTIONS = {"submit": lifecycle.submit, "pause": lifecycle.pause, "resume": lifecycle.resume, "end": lifecycle.end}
ACTION_DONE = {"submit": "Submitted for review: an operator approves it before it serves.",
               "pause": "Paused: it serves no more until resumed.", "resume": "Resumed: it serves again.",
               "end": "Ended: its unspent budget and task pools are back in your balance."}


@blueprint.app_template_filter("datetime_local")
def datetime_local_filter(moment: datetime | None) -> str:
    """An instant as an ``<input type="datetime-local">`` value in UTC (empty for none)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M") if moment else ""


# Refusals whose own sentence describes the format rather than the field: said with the field's rule instead.
RULE_CODES = frozenset({"invalid_amount", "invalid_url", "missing_field", "invalid_config"})


# What an amount field takes, said beside it when its value does not read.
AMOUNT_RULES = {
    "amount": "a G$ amount more than 0, such as 2.5: digits, at most 18 decimals, no sign",
    "price": "a G$ amount of 0 or more, such as 2.5: digits, at most 18 decimals, no sign",
}


# What each field of a goal's form takes, in people's words: said beside it when its value does not read.
GOAL_RULES = {
    "name": "a name of 1 to 120 characters",
    "kind": "off-chain (reported by your server) or on-chain (a contract's event)",
    "event": "the event's name in lower-case letters, digits, _, . and -, starting with a letter or a digit, at most "
             "64 characters, such as purchase",
    "clickWindowDays": f"a whole number of days from 1 to {MAX_WINDOW_DAYS}",
    "viewWindowHours": f"a whole number of hours from 0 (off) to {MAX_VIEW_WINDOW_HOURS}",
    "walletCap": f"a whole number from 1 to {MAX_WALLET_CAP}",
    "cpa": AMOUNT_RULES["price"],
    "contract": "the contract's address: 0x and 40 hexadecimal digits",
    "topic0": "the event's topic0: 0x and 64 hexadecimal digits",
    "walletField": "topic1 to topic3, data0 to data63, or tx.from",
    "amountField": "topic1 to topic3, or data0 to data63",
    "minAmount": "a whole number in the event's smallest unit, such as 1000000000000000000",
}
# Refusals of a goal's field that are about how its value reads (others say what is wrong in their own words).
_GOAL_FORMAT_CODES = frozenset({"invalid_field", "invalid_amount", "invalid_wallet", "missing_field"})


@blueprint.app_context_processor
def amount_rules() -> dict[str, Any]:
    """The advertiser's forms' words for amounts (``amount_rules.price``)."""
    return {"amount_rules": AMOUNT_RULES}


@blueprint.app_template_filter("field_message")
def field_message_filter(error: DomainError, rule: str = "") -> str:
    """A refusal said next to its field: what the field takes (``rule``) when the refusal is about the value's
    form, else the refusal's sentence (already in the words of the field's label, ``portal.words``)."""
    if rule and error.code in RULE_CODES:
        return rule[:1].upper() + rule[1:] + ("" if rule.endswith(".") else ".")
    return error.message


@blueprint.app_template_filter("domain_of")
def domain_of_filter(site_id: str, domains: Mapping[str, str]) -> str:
    """A site's domain, as the page names sites (its id when the site no longer exists)."""
    return domains.get(site_id, site_id)


async def _site_ids(form: Mapping[str, str]) -> MultiDict[str, str]:
    """The campaign form (every value of a field sent several times, as the targeting checkboxes are) with its
    schedule written from the week grid's cells (``portal.targeting.written_schedule``) and its site lists
    (domains, as a person picks sites) written as the site ids the command takes; Invalid ``unknown_domain`` naming
    the field when a domain has no site."""
    values = written_schedule(MultiDict(form))
    for name in ("siteAllow", "siteDeny"):
        if name not in values:
            continue
        found = await sites.sites_of_domains(listed(values[name]))
        unknown = [domain for domain, ids in found.items() if not ids]
        if unknown:
            raise Invalid("unknown_domain", f"{name}: no site is registered under {unknown[0]}; pick a domain from "
                                            "the list.", field=name)
        values[name] = " ".join(site_id for ids in found.values() for site_id in ids)
    return values


async def _site_context(campaign: Campaign | None = None) -> dict[str, Any]:
    """What the campaign form needs to name sites by domain: the campaign's sites' domains, and the verified
    domains to pick from."""
    named = [*campaign.site_allow, *campaign.site_deny] if campaign else []
    return {"site_domains": await sites.domains_of(named), "verified_domains": await sites.verified_domains()}


# The account page ------------------------------------------------------------------------------------------------

async def _registered() -> Advertiser | None:
    try:
        return await advertisers.advertiser_of(current_wallet())
    except NotFound:
        return None


async def home_context(now: datetime, **extra: Any) -> dict[str, Any]:
    """What the account page shows: the balance, deposit and withdrawal forms, recent money movements and the
    campaigns, or, before the wallet registered, the form that registers it; and the campaigns of each account the
    wallet is a member of, with its role there (their pages open within that role)."""
    advertiser = await _registered()
    joined = [{"account": membership.advertiser, "role": membership.role,
               "balance": await advertiser_balance(membership.advertiser),
               "campaigns": await views.list_campaigns(membership.advertiser.id, now)}
              for membership in cast(list[AdvertiserMember],
                                     await members.memberships(members.ADVERTISERS, current_wallet()))]
    if advertiser is None:
        return {"advertiser": None, "memberships": joined, **extra}
    return {"advertiser": advertiser, "balance": await advertiser_balance(advertiser),
            "campaigns": await views.list_campaigns(advertiser.id, now),
            "activity": await activity.recent(advertiser_holder(advertiser)), "memberships": joined, **extra}


def _home_refused(form_name: str) -> Refused:
    """The account page's form ``form_name`` refused: shown again with the reason beside the field."""
    async def refused(error: DomainError, sent: Sent) -> Response:
        return await form_error(f"portal/advertise/_{form_name}_form.html", f"#{form_name}-form", error,
                                "portal/advertise/home.html", lambda: home_context(sent.now),
                                values=sent.form.to_dict(), failed_form=form_name)

    return refused


def _home() -> str:
    return url_for("portal_advertisers.advertise_home")


# A campaign's page in sections, in the order of its tabs, each at its own URL; its report, a page of its own, is the
# last tab ("Reports").
CAMPAIGN_SECTIONS = {"overview": "Overview", "creatives": "Creatives and tasks", "targeting": "Targeting",
                     "budget": "Budget", "goals": "Conversion goals", "delivery": "Why it serves"}
OVERVIEW = "overview"
_OTHER_SECTIONS = ", ".join(key for key in CAMPAIGN_SECTIONS if key != OVERVIEW)


def _campaign_page(campaign_id: str, section: str = OVERVIEW) -> str:
    return url_for("portal_advertisers.advertise_campaign", campaign_id=campaign_id, section=section)


def _section_of(form_name: str) -> str:
    """The section of a campaign's page that holds the form ``form_name``."""
    sections = {"actions": OVERVIEW, "delete": OVERVIEW, "settings": "targeting", "allocate": "budget", "goal": "goals"}
    return sections.get(form_name, "creatives")


def _withdrawal_page(withdrawal_id: str) -> str:
    return url_for("portal_advertisers.advertise_withdrawal", withdrawal_id=withdrawal_id)


@blueprint.get(HOME)
@account_page
@injected
async def advertise_home(now: datetime) -> tuple[str, int]:
    """The signed-in wallet's advertiser account: its G$ and its campaigns."""
    return await page("portal/advertise/home.html", "portal/advertise/home.html", **await home_context(now))


@blueprint.post(f"{HOME}/register")
@account_form
@form_view()
async def advertise_register(sent: Sent) -> Response:
    """Open the wallet's advertiser account (once; a second time changes nothing)."""
    await advertisers.register(sent.wallet, sent.command(AdvertiserRegistration), sent.now)
    return see_other(_home())


@blueprint.get(f"{HOME}/balance")
@account_page
@injected
async def advertise_balance(now: datetime) -> tuple[str, int]:
    """The balance partial (what it reloads after every money movement)."""
    advertiser = await advertisers.advertiser_of(current_wallet())
    money = await advertiser_balance(advertiser)
    return await part_of_page("portal/advertise/_balance.html", "portal/advertise/home.html",
                              lambda: home_context(now), balance=money)


@blueprint.post(f"{HOME}/deposit/prepare")
@account_form
@form_view(_home_refused("deposit"), shows=(Invalid,))
async def advertise_deposit_prepare(sent: Sent) -> Response:
    """The approve and deposit transactions the wallet sends to deposit ``amount`` G$ into the vault."""
    plan = await deposits.prepare(advertiser_holder(await advertisers.advertiser_of(sent.wallet)),
                                  sent.command(Funds).amount, sent.run.chain)
    return Response(await render_template("portal/advertise/_deposit_send.html", plan=plan,
                                          chain_id=sent.run.chain.chain_id))


@blueprint.post(f"{HOME}/deposit")
@account_form
@form_view(_home_refused("deposit"), shows=(Invalid, Conflict))  # Conflict: a hash credited to another account
async def advertise_deposit(sent: Sent) -> Response:
    """Where the deposit ``txHash`` stands (sent, confirming, credited), crediting it once the chain shows it;
    htmx polls this partial until it is credited."""
    advertiser = await advertisers.advertiser_of(sent.wallet)
    progress = await deposits.progress(advertiser_holder(advertiser), sent.command(DepositReport).tx_hash,
                                       sent.run.chain, sent.now)
    if not wants_fragment():
        await flash(f"Deposit {progress.tx_hash}: {progress.state}.")
        return see_other(_home())
    return Response(await render_template("portal/_topup_status.html", progress=progress,
                                          status_url=url_for("portal_advertisers.advertise_deposit"),
                                          credited_to="your balance"),
                    headers=BALANCE_CHANGED if progress.state == "credited" else {})


@blueprint.post(f"{HOME}/withdraw")
@account_form
@form_view(_home_refused("withdraw"), shows=(Invalid, Conflict))
async def advertise_withdraw(sent: Sent) -> Response:
    """Debit ``amount`` G$ from the unallocated balance now and show the claim for the wallet to redeem; the form's
    idempotency key makes a second submission of the same rendering show the same withdrawal."""
    run = sent.run
    holder = advertiser_holder(await advertisers.advertiser_of(sent.wallet))
    result = await withdrawals.withdraw(holder, sent.command(Funds).amount, Token.GS,
                                        minimum=run.settings.min_withdrawal, chain=run.chain, now=sent.now,
                                        idempotency_key=form_idempotency_key(sent.form))
    if not wants_fragment():
        await flash(f"Withdrawal of {to_decimal_string(int(result.withdrawal.amount))} G$ issued: redeem its claim "
                    "from your wallet.")
        return see_other(_home())
    view = await withdrawals.view(holder, result.withdrawal.id, run.chain)
    return Response(await render_template("portal/_withdrawal.html", view=view, fresh=True,
                                          withdrawal_url=_withdrawal_page(view.withdrawal.id),
                                          withdraw_form="portal/advertise/_withdraw_form.html"),
                    headers=BALANCE_CHANGED)


@blueprint.get(f"{HOME}/withdrawals/<withdrawal_id>")
@account_page
@injected
async def advertise_withdrawal(withdrawal_id: str, run: Services, now: datetime) -> Response:
    """One of the advertiser's withdrawals as the chain has it (``tx``: the redeem the wallet reported)."""
    holder = advertiser_holder(await advertisers.advertiser_of(current_wallet()))
    view = await withdrawals.view(holder, withdrawal_id, run.chain, command_of(RedeemReport, request.args).tx)
    settled = view.withdrawal.status.value != "issued"
    body, _ = await part_of_page("portal/_withdrawal.html", "portal/advertise/home.html", lambda: home_context(now),
                                 view=view,
                                 fresh=False, withdrawal_url=_withdrawal_page(view.withdrawal.id),
                                 shown_withdrawal=view)
    return Response(body, headers=BALANCE_CHANGED if settled else {})


# Campaigns -------------------------------------------------------------------------------------------------------

@blueprint.get(f"{HOME}/campaigns/new")
@account_page
async def advertise_new_campaign() -> tuple[str, int]:
    """The form that creates a draft campaign."""
    await advertisers.advertiser_of(current_wallet())
    return await page("portal/advertise/new.html", "portal/advertise/new.html", values={}, **await _site_context())


async def _new_campaign_refused(error: DomainError, sent: Sent) -> Response:
    return await form_error("portal/advertise/_campaign_form.html", "#campaign-form", error,
                            "portal/advertise/new.html", _no_context, values=sent.form,
                            failed_form="settings", **await _site_context())


@blueprint.post(f"{HOME}/campaigns")
@account_form
@form_view(_new_campaign_refused, shows=(Invalid,))
async def advertise_create_campaign(sent: Sent) -> Response:
    """Create a draft campaign and go to its page, where creatives, tasks and funding follow."""
    advertiser = await advertisers.advertiser_of(sent.wallet)
    created = await campaigns.create_campaign(advertiser.id, command_of(NewCampaign, await _site_ids(sent.form)),
                                              sent.now)
    return _go_to(_campaign_page(created.id))


async def _estimate_refused(error: DomainError, sent: Sent) -> str:
    return await render_template("portal/advertise/_campaign_estimate.html", estimate_error=error)


@blueprint.post(f"{HOME}/campaigns/estimate")
@account_form
@form_view(_estimate_refused, shows=(Invalid,))
async def advertise_campaign_estimate(sent: Sent) -> str:
    """The campaign form's estimate as it stands (``adnet.delivery.forecast``, ``adnet.audiences.reach``): requests
    a day, the share it would win, the days its budget lasts, and the proven wallets its audience reaches."""
    advertiser = await advertisers.advertiser_of(sent.wallet)
    query = command_of(ForecastQuery, await _site_ids(sent.form))
    found = await forecast(query, advertiser.id, sent.run.serving.index, sent.now)
    wallets = await reach(query.targeting, sent.now)
    requests = await site_requests(query.site_allow, query.site_deny, query.targeting, sent.now)
    return await render_template("portal/advertise/_campaign_estimate.html", estimate=found, wallet_reach=wallets,
                                 audience_requests=rounded(int(requests * wallets.share)))


async def _no_context() -> dict[str, Any]:
    return {}


async def campaign_context(campaign_id: str, run: Services, now: datetime, section: str = OVERVIEW,
                           **extra: Any) -> dict[str, Any]:
    """What a campaign's page shows in ``section``: the campaign with its creatives and tasks, their pools, the
    balance of the advertiser account it belongs to (the wallet's own, or one it is a member of), and what each
    form needs."""
    view = await views.campaign_detail(current_wallet(), campaign_id, now)
    pools = await ledger.balances("task")
    return {"view": view, "campaign": view.campaign,
            "balance": await advertiser_balance(view.campaign.advertiser),
            "pools": {task.id: pools.get(task.id, 0) for task in view.tasks},
            "task_forms": task_forms.FORMS, "onchain_choices": onchain_choices(run.chain.deployment),
            "survey_types": task_forms.SURVEY_TYPES,
            "media_types": list(MediaType), "goal_kinds": list(GoalKind), "goal_rules": GOAL_RULES,
            **await _site_context(view.campaign),
            "campaign_sections": CAMPAIGN_SECTIONS, "section": section, "section_title": CAMPAIGN_SECTIONS[section],
            "values": {}, **extra}


async def _campaign_changed(sent: Sent, campaign_id: str, message: str, section: str, *,
                            money: bool = False) -> Response:
    """A campaign form of ``section`` that worked: that section with ``message`` (htmx), or 303 to it."""
    if not wants_fragment():
        await flash(message)
        return see_other(_campaign_page(campaign_id, section))
    context = await campaign_context(campaign_id, sent.run, sent.now, section, done=message)
    body = await render_template("portal/advertise/_campaign.html", **context)
    return Response(body, headers=BALANCE_CHANGED if money else {})


async def _campaign_refused(sent: Sent, campaign_id: str, form_name: str, error: DomainError,
                            values: Mapping[str, str]) -> Response:
    """A campaign form refused (400 or 409): its section again with the reason beside that form."""
    context = await campaign_context(campaign_id, sent.run, sent.now, _section_of(form_name), values=values,
                                     failed_form=form_name)
    return await form_error("portal/advertise/_campaign.html", "#campaign", error, "portal/advertise/campaign.html",
                            _no_context, **context)


# The refusals a campaign's forms show beside themselves (others are the error page).
CAMPAIGN_REFUSALS = (Invalid, Conflict)


def _campaign_form_refused(form_name: str, *, values: bool = True) -> Refused:
    """The refusal of the form ``form_name`` of the campaign its route names, shown with the values it sent (or
    none)."""
    async def refused(error: DomainError, sent: Sent, campaign_id: str, **_: str) -> Response:
        return await _campaign_refused(sent, campaign_id, form_name, error, sent.form if values else {})

    return refused


def _creative_form_refused(*, values: bool = True) -> Refused:
    """The refusal of a form of one creative (``creative-<id>``, or the actions'), on its campaign."""
    async def refused(error: DomainError, sent: Sent, creative_id: str) -> Response:
        creative = await creatives.owned_creative(sent.wallet, creative_id)
        form_name = f"creative-{creative_id}" if values else "actions"
        return await _campaign_refused(sent, creative.campaign.id, form_name, error, sent.form if values else {})

    return refused


async def _task_campaign_id(wallet: str, task_id: str) -> str:
    task = await authoring.owned_task(wallet, task_id)
    return task.campaign.id if task.campaign else ""


async def _task_money_refused(error: DomainError, sent: Sent, task_id: str, **_: str) -> Response:
    campaign_id = await _task_campaign_id(sent.wallet, task_id)
    return await _campaign_refused(sent, campaign_id, f"task-{task_id}", error, sent.form)


async def _task_delete_refused(error: DomainError, sent: Sent, task_id: str) -> Response:
    return await _campaign_refused(sent, await _task_campaign_id(sent.wallet, task_id), "actions", error, {})


async def _new_goal_refused(error: DomainError, sent: Sent, campaign_id: str) -> Response:
    """A goal the form describes, refused: a value that does not read is said with what its field takes."""
    if isinstance(error, Invalid) and error.code in _GOAL_FORMAT_CODES and error.field in GOAL_RULES:
        rule = GOAL_RULES[error.field]
        error = Invalid(error.code, rule[:1].upper() + rule[1:] + ".", field=error.field)
    return await _campaign_refused(sent, campaign_id, "goal", error, sent.form)


async def _new_task_refused(error: DomainError, sent: Sent, campaign_id: str) -> Response:
    kind_form = task_forms.form_of(sent.form.get("kind"))
    if isinstance(error, Invalid):
        error = task_forms.refusal(kind_form, error, sent.form)
    return await _campaign_refused(sent, campaign_id, kind_form.form_name, error, sent.form)


@blueprint.get(f"{HOME}/campaigns/<campaign_id>", defaults={"section": OVERVIEW})
@blueprint.get(f"{HOME}/campaigns/<campaign_id>/<any({_OTHER_SECTIONS}):section>")
@account_page
@injected
async def advertise_campaign(campaign_id: str, section: str, run: Services, now: datetime) -> tuple[str, int]:
    """A section of one of the wallet's campaigns: the whole page, or for htmx the campaign's fragment with its tabs
    and that section (404 for no such campaign, 403 for another wallet's)."""
    context = await campaign_context(campaign_id, run, now, section)
    if section == "delivery":
        campaign = context["campaign"]
        context.update(await explanation_context(run, Asker(advertisers=frozenset({campaign.advertiser_id})),
                                                 campaign_ids=frozenset({campaign.id})))
    return await page("portal/advertise/campaign.html", "portal/advertise/_campaign.html", **context)


@blueprint.post(f"{HOME}/campaigns/<campaign_id>")
@account_form
@form_view(_campaign_form_refused("settings"), shows=CAMPAIGN_REFUSALS)
async def advertise_edit_campaign(sent: Sent, campaign_id: str) -> Response:
    """Change the campaign's settings (not while in review, nor once ended)."""
    changes = command_of(CampaignChanges, await _site_ids(sent.form))
    await campaigns.edit_settings(sent.wallet, campaign_id, changes, sent.now)
    return await _campaign_changed(sent, campaign_id, "Settings saved.", "targeting")


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/<any(submit, pause, resume, end):action>")
@account_form
@form_view(_campaign_form_refused("actions", values=False), shows=CAMPAIGN_REFUSALS)
async def advertise_campaign_action(sent: Sent, campaign_id: str, action: str) -> Response:
    """Move the campaign: submit for review, pause, resume or end."""
    await ACTIONS[action](sent.wallet, campaign_id, sent.now)
    return await _campaign_changed(sent, campaign_id, ACTION_DONE[action], OVERVIEW, money=action == "end")


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/delete")
@account_form
@form_view(_campaign_form_refused("delete", values=False), shows=CAMPAIGN_REFUSALS)
async def advertise_delete_campaign(sent: Sent, campaign_id: str) -> Response:
    """Delete a draft or rejected campaign with its content once its name is typed as ``confirmName`` (the danger
    zone's confirmation, checked here, not only in the browser); its money returns to the balance. Back to the
    account page, where the outcome shows."""
    campaign = await campaigns.owned_campaign(sent.wallet, campaign_id)
    confirmed(sent, "confirmName", campaign.name, f"Type {campaign.name} to confirm that the draft is deleted.")
    returned = await drafts.delete_campaign(sent.wallet, campaign_id, sent.now)
    back = f", and {to_decimal_string(returned)} G$ returned to your balance" if returned else ""
    await flash(f"Deleted the draft {campaign.name}{back}.")
    return _go_to(_home())


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/duplicate")
@account_form
@form_view()
async def advertise_duplicate_campaign(sent: Sent, campaign_id: str) -> Response:
    """Copy the campaign as a new draft without money and go to the copy."""
    copy = await drafts.duplicate_campaign(sent.wallet, campaign_id, sent.now)
    await flash(f"This is a new draft copied from {copy.name.removesuffix(drafts.COPY_SUFFIX)}: its creatives and "
                "tasks are copied, its budget is not funded.")
    return _go_to(_campaign_page(copy.id))


def _go_to(location: str) -> Response:
    """The whole page goes to ``location``: htmx by ``HX-Redirect``, a plain form by 303."""
    if wants_fragment():
        return Response("", 204, headers={"HX-Redirect": location})
    return see_other(location)


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/allocate")
@account_form
@form_view(_campaign_form_refused("allocate"), shows=CAMPAIGN_REFUSALS)
async def advertise_allocate(sent: Sent, campaign_id: str) -> Response:
    """Move ``amount`` G$ from the unallocated balance into the campaign's budget."""
    funds = sent.command(Funds)
    await funding.allocate_to_campaign(sent.wallet, campaign_id, funds.amount, sent.now)
    return await _campaign_changed(sent, campaign_id,
                                   f"Allocated {to_decimal_string(funds.amount)} G$ to the budget.", "budget",
                                   money=True)


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/creatives")
@account_form
@form_view(_campaign_form_refused("creative"), shows=CAMPAIGN_REFUSALS)
async def advertise_add_creative(sent: Sent, campaign_id: str) -> Response:
    """Add a creative; it is reviewed with the campaign, or alone when the campaign is already reviewed."""
    await creatives.add_creative(sent.wallet, campaign_id, sent.command(NewCreative), sent.now, sent.run.banners)
    return await _campaign_changed(sent, campaign_id, "Creative added; it waits for review.", "creatives")


@blueprint.post(f"{HOME}/creatives/<creative_id>")
@account_form
@form_view(_creative_form_refused(), shows=CAMPAIGN_REFUSALS)
async def advertise_edit_creative(sent: Sent, creative_id: str) -> Response:
    """Change a creative: it goes back to review while the campaign's other creatives keep serving."""
    creative = await creatives.owned_creative(sent.wallet, creative_id)
    run = sent.run
    await creatives.edit_creative(sent.wallet, creative_id, sent.command(CreativeChanges), sent.now, run.banners,
                                  run.settings.public_url)
    return await _campaign_changed(sent, creative.campaign.id, "Creative changed; it waits for review again.",
                                   "creatives")


@blueprint.post(f"{HOME}/creatives/<creative_id>/delete")
@account_form
@form_view(_creative_form_refused(values=False), shows=CAMPAIGN_REFUSALS)
async def advertise_delete_creative(sent: Sent, creative_id: str) -> Response:
    """Delete a creative of a draft or rejected campaign."""
    creative = await creatives.owned_creative(sent.wallet, creative_id)
    await drafts.delete_creative(sent.wallet, creative_id)
    return await _campaign_changed(sent, creative.campaign.id,
                                   f"Deleted the {creative.width}x{creative.height} creative.", "creatives")


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/tasks")
@account_form
@form_view(_new_task_refused, shows=CAMPAIGN_REFUSALS)
async def advertise_add_task(sent: Sent, campaign_id: str) -> Response:
    """Add a CTA task or a unit with its config and rewards (while the campaign is a draft or rejected)."""
    kind_form = task_forms.form_of(sent.form.get("kind"))
    config = task_forms.config_of(kind_form, sent.form, onchain_choices(sent.run.chain.deployment))
    task = await authoring.create_task(sent.wallet, campaign_id, sent.command(NewTask, config=config), sent.now)
    return await _campaign_changed(sent, campaign_id, f"{kind_form.name} task {task.title} added; it is reviewed "
                                                      "with the campaign.", "creatives")


@blueprint.post(f"{HOME}/campaigns/<campaign_id>/goals")
@account_form
@form_view(_new_goal_refused, shows=CAMPAIGN_REFUSALS)
async def advertise_add_goal(sent: Sent, campaign_id: str) -> Response:
    """Add a conversion goal (while the campaign is a draft or rejected): the API's command and rules."""
    goal = await goals.add_goal(sent.wallet, campaign_id, sent.command(NewGoal), sent.now)
    return await _campaign_changed(sent, campaign_id, f"Goal {goal.name} added; it is reviewed with the campaign.",
                                   "goals")


@blueprint.post(f"{HOME}/tasks/<task_id>/<any(allocate, end):action>")
@account_form
@form_view(_task_money_refused, shows=CAMPAIGN_REFUSALS)
async def advertise_task_money(sent: Sent, task_id: str, action: str) -> Response:
    """``allocate``: move ``amount`` G$ into the task's pool; ``end``: switch the task off and return its pool."""
    task = await authoring.owned_task(sent.wallet, task_id)
    if action == "allocate":
        funds = sent.command(Funds)
        await authoring.allocate_to_task(sent.wallet, task_id, funds.amount, sent.now)
        message = f"Allocated {to_decimal_string(funds.amount)} G$ to the pool of {task.title}."
    else:
        returned = await authoring.end_task(sent.wallet, task_id, sent.now)
        message = f"{task.title} ended; {to_decimal_string(returned)} G$ returned to your balance."
    return await _campaign_changed(sent, task.campaign.id if task.campaign else "", message, "creatives",
                                   money=True)


@blueprint.post(f"{HOME}/tasks/<task_id>/delete")
@account_form
@form_view(_task_delete_refused, shows=CAMPAIGN_REFUSALS)
async def advertise_delete_task(sent: Sent, task_id: str) -> Response:
    """Delete a task or unit of a draft or rejected campaign; its pool returns to the balance."""
    task = await authoring.owned_task(sent.wallet, task_id)
    returned = await drafts.delete_task(sent.wallet, task_id, sent.now)
    back = f"; {to_decimal_string(returned)} G$ returned to your balance" if returned else ""
    return await _campaign_changed(sent, task.campaign.id if task.campaign else "", f"Deleted {task.title}{back}.",
                                   "creatives", money=bool(returned))


# Answers to units ------------------------------------------------------------------------------------------------

@blueprint.get(f"{HOME}/units/<unit_id>/results")
@account_page
@injected
async def advertise_unit_results(unit_id: str, now: datetime) -> tuple[str, int]:
    """What viewers answered a poll, feedback or survey of the wallet's: the API's results, with their charts."""
    unit = await results.owned_unit(unit_id, current_wallet())
    found = await results.unit_results(unit, now)
    return await page("portal/advertise/results.html", "portal/advertise/results.html", unit=unit, found=found,
                      charts=_answer_charts(found))


def _answer_charts(found: results.UnitResults) -> dict[str, Markup]:
    """A chart per summary that counts something: a poll's or a choice question's options, a rating's values; by
    the question's id (``poll`` and ``rating`` for a poll and a feedback)."""
    def options(tallies: list[results.OptionTally], key: str, title: str) -> Markup:
        return tally_chart([(tally.label, tally.votes) for tally in tallies], ident=f"chart-{key}", title=title)

    def ratings(summary: results.RatingSummary, key: str, title: str) -> Markup:
        return tally_chart([(str(row.rating), row.count) for row in summary.distribution], ident=f"chart-{key}",
                           title=title)

    summary = found.summary
    if isinstance(summary, results.PollResults):
        return {"poll": options(summary.options, "poll", f"Votes: {summary.question}")}
    if isinstance(summary, results.FeedbackResults):
        return {"rating": ratings(summary.rating, "rating", "Ratings")} if summary.rating else {}
    charts = {}
    for question in summary.questions:
        if question.options is not None:
            charts[question.id] = options(question.options, question.id, f"Answers: {question.prompt}")
        elif question.rating is not None:
            charts[question.id] = ratings(question.rating, question.id, f"Ratings: {question.prompt}")
    return charts


@blueprint.get(f"{HOME}/units/<unit_id>/results.csv")
@account_page
async def advertise_unit_results_csv(unit_id: str) -> Response:
    """Every response of the unit as CSV (the API's ``results.csv``)."""
    unit = await results.owned_unit(unit_id, current_wallet())
    return csv_file(await results.responses_csv(unit), f"{unit.id}-responses.csv", no_store=True)


# Reports ---------------------------------------------------------------------------------------------------------

@blueprint.get(f"{HOME}/campaigns/<campaign_id>/report")
@account_page
@injected
async def advertise_report(campaign_id: str, run: Services) -> tuple[str, int]:
    """The campaign's figures per UTC day from ``from`` to ``to`` (default the last 30 days), or per UTC hour
    (``granularity=hour``, the last 14 days) written in the viewer's time zone (``portal.zones``), with its CSV:
    spend and conversions per day as charts, per day or hour as tables, its conversions per goal, and its figures
    per audience rule group."""
    values = {"from": request.args.get("from", ""), "to": request.args.get("to", "")}
    start, end, granularity, error = report_asked(request.args, run.clock.today())
    report = await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end, granularity)
    daily = report if granularity == Granularity.DAY else await campaign_reports.campaign_report(
        current_wallet(), campaign_id, start, end)
    goals = await breakdowns.advertiser_breakdown(current_wallet(), Dimension.GOAL, start, end, campaign_id)
    audiences = await audience_reports.audience_report(current_wallet(), campaign_id, start, end)
    chart = earnings_chart([(figures.day, figures.spend) for figures in daily.days if figures.day],
                           title="G$ spent per day")
    conversions_chart = earnings_chart([(figures.day, figures.conversions) for figures in daily.days if figures.day],
                                       title="Conversions per day", symbol="conversions", text=str,
                                       ident="conversions-chart", empty="No conversion in these days yet.")
    return await page("portal/advertise/report.html", "portal/advertise/report.html",
                      status_of(error) if error else 200, report=report, chart=chart,
                      conversions_chart=conversions_chart, goals=goals, audiences=audiences, error=error,
                      values=values, failed_form="report", campaign_sections=CAMPAIGN_SECTIONS, viewer=viewer_zone(),
                      hourly_from=max(start, hourly_reach(run.clock.today())))


@blueprint.get(f"{HOME}/campaigns/<campaign_id>/report.csv")
@account_page
@injected
async def advertise_report_csv(campaign_id: str, run: Services) -> Response:
    """The same report as CSV, one row per day (or UTC hour) and a total row."""
    asked = command_of(ReportPeriod, request.args)
    start, end = asked.days(run.clock.today())
    report = await campaign_reports.campaign_report(current_wallet(), campaign_id, start, end, asked.granularity)
    return csv_file(campaign_reports.report_csv(report), report_file(f"{report.campaign.id}-{start}-{end}",
                                                                     report.granularity), no_store=True)


@blueprint.get(f"{HOME}/campaigns/<campaign_id>/report/audiences.csv")
@account_page
@injected
async def advertise_audience_report_csv(campaign_id: str, run: Services) -> Response:
    """The campaign's figures per audience rule group as CSV (the API's ``report/audiences.csv``)."""
    start, end = command_of(Period, request.args).days(run.clock.today())
    report = await audience_reports.audience_report(current_wallet(), campaign_id, start, end)
    return csv_file(audience_reports.report_csv(report), f"{report.campaign.id}-audiences-{start}-{end}.csv",
                    no_store=True)
