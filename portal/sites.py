"""Sites: register one (validated as it is typed), its page (ownership and how to prove it, balance, money forms,
embed snippets, the units its visitors answered), checking its proof now, and the CSV export of its events for a
range of days."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from quart import Response, render_template, request, url_for

from adnet.accounts import sites
from adnet.accounts.commands import DomainCheck, SiteRegistration
from adnet.accounts.content_taxonomy import content_taxonomy
from adnet.accounts.models import MemberRole, Site
from adnet.chain.client import ChainUnavailable
from adnet.core.amounts import Token
from adnet.core.errors import Conflict, DomainError
from adnet.delivery import house_ads
from adnet.delivery.controls import stored_controls
from adnet.delivery.explainer import Asker
from adnet.delivery.sdk import embed_snippets
from adnet.money import activity, exchanges, ledger
from adnet.money.holders import site_holder
from adnet.reporting import dashboard, traffic
from adnet.reporting import sites as site_reports
from adnet.reporting.balances import site_balance
from adnet.reporting.buckets import Granularity, hourly_reach
from adnet.reporting.commands import Period
from adnet.reporting.dashboard import Figures
from adnet.services import Services
from portal.dashboard import dashboard_context, earnings_panel
from portal.explainer import explanation_context
from portal.forms import command_of
from portal.pages import account_form, account_page, form_error, page, portal_blueprint, see_other, wants_fragment
from portal.unit_builder import units_context
from portal.views import Sent, form_view
from portal.words import in_words
from portal.zones import viewer_zone
from web.context import injected
from web.csv import csv_file, report_file
from web.errors import status_of
from web.sessions import current_wallet

blueprint = portal_blueprint("sites")


@dataclass(frozen=True)
class Funds:
    """What the site's money forms can move at most: the wallet's G$ on the chain (None when the chain cannot be
    read), and the site's claimable balance per token, smallest units."""

    wallet: int | None
    site: dict[Token, int]


async def funds_of(site: Site, run: Services) -> Funds:
    """The wallet's and the site's money, as the top-up, withdraw and exchange forms show it beside their amount."""
    try:
        wallet = await run.chain.token_balance(Token.GS, site.publisher.wallet)
    except ChainUnavailable:
        wallet = None
    held = {token: await ledger.balance(ledger.site(site.id, token)) for token in Token}
    return Funds(wallet=wallet, site=held)


# The site page's sections, in the order of its tabs: each has its own URL (``section_url``), answered as a whole
# page, or as the tabs with the section alone when htmx asks (``portal/_site_sections.html``).
SECTIONS = {"overview": "Overview", "money": "Money", "embed": "Embed and units", "traffic": "Traffic and reports",
            "controls": "Controls", "settings": "Settings"}
OVERVIEW = "overview"


def section_url(site_id: str, section: str = OVERVIEW, **query: Any) -> str:
    """The address of one section of a site's page."""
    return url_for("portal_sites.site_page", site_id=site_id, section=section, **query)


async def site_context(site: Site, run: Services, section: str = OVERVIEW, **extra: Any) -> dict[str, Any]:
    """What the site page shows in ``section`` (one of ``SECTIONS``): the site and the tabs, and what that section
    reads, no more (``_SECTION_CONTEXTS``)."""
    return {"site": site, "sections": SECTIONS, "section": section, "section_title": SECTIONS[section],
            **await _SECTION_CONTEXTS[section](site, run), **extra}


async def _overview_context(site: Site, run: Services) -> dict[str, Any]:
    """Overview: how the domain is proved, the balance, the site's earnings chart and its last 30 days' totals."""
    today = run.clock.today()
    recent = await traffic.site_traffic(site.id, today - timedelta(days=29), today)

    async def earned(first: date, last: date, granularity: Granularity) -> list[tuple[date, int]]:
        return [(day.hour or day.day, day.earned)
                for day in (await traffic.site_traffic(site.id, first, last, granularity)).days
                if day.day is not None]

    panel = await earnings_panel(run, url_for("portal_sites.site_earnings", site_id=site.id), "Earnings",
                                 f"G$ earned per day on {site.domain}", earned,
                                 "Nothing earned in these days yet: earnings show here once this site shows ads.")
    return {"instructions": run.site_checks.instructions(site), "traffic": recent,
            "balance": await site_balance(site.publisher.wallet, site.id), **panel}


async def _money_context(site: Site, run: Services) -> dict[str, Any]:
    """Money: the balance, the vault's rate, what the money forms can move and the recent movements."""
    return {"balance": await site_balance(site.publisher.wallet, site.id),
            "rate": await exchanges.current_rate(run.chain),
            "activity": await activity.recent(site_holder(site)), "funds": await funds_of(site, run)}


async def _embed_context(site: Site, run: Services) -> dict[str, Any]:
    """Embed and units: the embed snippets, the site's ad units and the builder."""
    return {"snippets": embed_snippets(run.settings.public_url, site.id), **await units_context(site, run)}


async def _traffic_context(site: Site, run: Services) -> dict[str, Any]:
    """Traffic and reports: the last 30 days' traffic per day, or the last 14 days' per hour (``granularity=hour``,
    written in the viewer's time zone), billed and filtered by reason; the ads that ran, the units answered, and the
    export's default range (this month)."""
    today = run.clock.today()
    month_ago = today - timedelta(days=29)
    granularity = _granularity_asked()
    first = hourly_reach(today) if granularity == Granularity.HOUR else month_ago
    recent = await traffic.site_traffic(site.id, first, today, granularity)
    return {"traffic": recent, "traffic_reasons": list(traffic.ordered_reasons(recent.totals.filtered)),
            "viewer": viewer_zone(), "hourly_from": first,
            "units": await site_reports.site_unit_results(site.id),
            **await _ads_context(site, month_ago, today, run),
            "export_from": today.replace(day=1).isoformat(), "export_to": today.isoformat(),
            **await explanation_context(run, Asker(site_owner=True), site.id)}


async def _controls_context(site: Site, run: Services) -> dict[str, Any]:
    """Controls: the site's house ads and floors, and what it blocks."""
    return {"house_ads": await house_ads.listed(site), "controls": stored_controls(site.controls)}


async def _settings_context(site: Site, run: Services) -> dict[str, Any]:
    """Settings: the site (its name, its content categories, its state, the danger zone) and the Content Taxonomy
    its categories are chosen from."""
    return {"content_taxonomy": content_taxonomy()}


_SECTION_CONTEXTS: dict[str, Callable[[Site, Services], Awaitable[dict[str, Any]]]] = {
    "overview": _overview_context, "money": _money_context, "embed": _embed_context, "traffic": _traffic_context,
    "controls": _controls_context, "settings": _settings_context}


async def _registration_refused(error: DomainError, sent: Sent) -> Response:
    return await form_error("portal/_register_form.html", "#register-site", error, "portal/dashboard.html",
                            lambda: dashboard_context(sent.run, sent.now), values=sent.values("domain", "name"))


@blueprint.post("/portal/sites")
@account_form
@form_view(_registration_refused)
async def register_site(sent: Sent) -> Response:
    """Register a domain for the signed-in wallet: the new row joins the dashboard's table (htmx) or the browser
    goes to the new site's page (303); a refusal is shown beside the field."""
    registration = await sites.register_site(sent.wallet, sent.command(SiteRegistration), sent.now,
                                             allow_special_names=not sent.run.settings.production)
    if not registration.created:
        raise Conflict("already_registered", "You have registered this domain already.", field="domain")
    if not wants_fragment():
        return see_other(section_url(registration.site.id))
    site = registration.site
    zero = Figures(0, 0, 0)
    row = dashboard.SiteReport(site_id=site.id, domain=site.domain, name=site.name, active=site.active, today=zero,
                               recent=zero, lifetime=zero)
    return Response(await render_template("portal/_site_created.html", row=row, ctr=dashboard.click_through_rate,
                                          values={}))


async def _domain_refused(error: DomainError, sent: Sent) -> str:
    return await render_template("portal/_domain_hint.html", error=error,
                                 empty=not sent.form.get("domain", "").strip())


@blueprint.post("/portal/sites/check")
@account_form
@form_view(_domain_refused)
async def check_domain(sent: Sent) -> str:
    """Inline validation while typing: the canonical domain that would be registered, or why it cannot be."""
    domain = sent.command(DomainCheck).domain
    sites.check_registrable(domain, allow_special_names=not sent.run.settings.production)
    return await render_template("portal/_domain_hint.html", domain=domain)


@blueprint.get("/portal/sites/<site_id>", defaults={"section": OVERVIEW})
@blueprint.get(f"/portal/sites/<site_id>/<any({', '.join(key for key in SECTIONS if key != OVERVIEW)}):section>")
@account_page
@injected
async def site_page(site_id: str, section: str, run: Services) -> tuple[str, int]:
    """A section of the page of a site of the signed-in wallet's accounts: the whole page, or for htmx the tabs
    with the section (404 for no such site, 403 for another wallet's)."""
    site = await sites.owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    return await page("portal/site.html", "portal/_site_sections.html", **await site_context(site, run, section))


@blueprint.get("/portal/sites/<site_id>/earnings")
@account_page
@injected
async def site_earnings(site_id: str, run: Services) -> tuple[str, int]:
    """The overview's earnings chart over the days the query asks for: the panel alone for htmx (400 with the
    refusal beside the field for a range that is not one), the overview otherwise."""
    site = await sites.owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    context = await site_context(site, run)
    error = context["earnings_error"]
    return await page("portal/site.html", "portal/_earnings.html", status_of(error) if error else 200, **context)


async def _verification_refused(error: DomainError, sent: Sent, site_id: str) -> Response:
    site = await sites.owned_site(sent.wallet, site_id)  # as the failed check left it
    return await form_error("portal/_site_verification.html", "#site-verification", error, "portal/site.html",
                            lambda: site_context(site, sent.run), site=site,
                            instructions=sent.run.site_checks.instructions(site), failed_form="verify")


@blueprint.post("/portal/sites/<site_id>/verify")
@account_form
@form_view(_verification_refused)
async def verify_site(sent: Sent, site_id: str) -> Response:
    """Look for the site's proof now: htmx gets the ownership section back, with the refusal in it when the check
    failed; without JavaScript, a 303 to the site page, or the page with the refusal and its status."""
    checks = sent.run.site_checks
    site = await checks.verify(await sites.owned_site(sent.wallet, site_id), sent.now)
    if not wants_fragment():
        return see_other(section_url(site.id))
    return Response(await render_template("portal/_site_verification.html", site=site, checked=True,
                                          instructions=checks.instructions(site)))


@blueprint.get("/portal/sites/<site_id>/traffic.csv")
@account_page
@injected
async def export_traffic(site_id: str, run: Services) -> Response:
    """The site's traffic per UTC day of the last 30 days, or per UTC hour of the last 14 (``granularity=hour``),
    billed and filtered per reason, as CSV."""
    site = await sites.owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    today = run.clock.today()
    granularity = _granularity_asked()
    start = hourly_reach(today) if granularity == Granularity.HOUR else today - timedelta(days=29)
    return csv_file(traffic.traffic_csv(await traffic.site_traffic(site.id, start, today, granularity)),
                    report_file(f"traffic-{site.id}-{start}-{today}", granularity), no_store=True)


def _granularity_asked() -> Granularity:
    """Per hour when the query asks for it (``granularity=hour``), per day otherwise."""
    return Granularity.HOUR if request.args.get("granularity") == Granularity.HOUR else Granularity.DAY


async def _export_refused(error: DomainError, sent: Sent, site_id: str) -> Response:
    site = await sites.owned_site(sent.wallet, site_id, MemberRole.VIEWER)
    return await form_error("portal/_export_form.html", "#export-events", error, "portal/site.html",
                            lambda: site_context(site, sent.run, "traffic"), values=sent.values("from", "to"),
                            failed_form="export")


@blueprint.get("/portal/sites/<site_id>/events.csv")
@account_page
@form_view(_export_refused)
async def export_events(sent: Sent, site_id: str) -> Response:
    """The site's tracking events from ``from`` to ``to`` (UTC days, inclusive) as CSV; a bad range is shown on the
    site page beside the export form."""
    site = await sites.owned_site(sent.wallet, site_id, MemberRole.VIEWER)
    start, end = sent.command(Period).days(sent.run.clock.today())
    return csv_file(site_reports.site_events_csv(site.id, start, end), f"events-{site.id}-{start}-{end}.csv",
                    no_store=True)


async def _ads_context(site: Site, start: date, end: date, run: Services) -> dict[str, Any]:
    return {"ads": await site_reports.ads_that_ran(site.id, start, end), "ads_from": start.isoformat(),
            "ads_to": end.isoformat(), "retention_days": run.settings.event_retention_days}


@blueprint.get("/portal/sites/<site_id>/ads")
@account_page
@injected
async def site_ads(site_id: str, run: Services) -> Response:
    """The ads that ran on the site from ``from`` to ``to`` (UTC days): the panel for htmx, the site page
    otherwise; a bad range is shown in the panel with its status."""
    site = await sites.owned_site(current_wallet(), site_id, MemberRole.VIEWER)
    try:
        start, end = command_of(Period, request.args).days(run.clock.today())
    except DomainError as error:
        context = {"site": site, "ads": [], "ads_error": in_words(error), "ads_from": request.args.get("from", ""),
                   "ads_to": request.args.get("to", "")}
        full = {} if wants_fragment() else await site_context(site, run, "traffic")
        body, _ = await page("portal/site.html", "portal/_site_ads.html", **{**full, **context})
        return Response(body, status_of(error))
    ads = await _ads_context(site, start, end, run)
    if wants_fragment():
        return Response(await render_template("portal/_site_ads.html", site=site, **ads))
    return Response(await render_template("portal/site.html", **{**await site_context(site, run, "traffic"), **ads}))
