"""Site ownership: a publisher proves a site's domain, the proof is re-checked, and one site at most holds a domain
verified.

Registering a domain proves nothing, so it never blocks anyone; a site earns only once it is ``verified``: adnet
fetched one of its proofs (``adnet.accounts.proofs``) from the domain, through the guarded fetcher
(``adnet.accounts.fetching``). The database decides who holds a domain: a ``verified_domain`` row per domain, its
primary key, inserted by the prover, so of many sites proving one domain at once exactly one takes it.

A proof takes the domain from nobody, or from a site whose proof is gone: when another site holds it, its own
proof is looked for in the same fetched documents. Still there: the prover is refused (``domain_taken``).
Gone: the holder lapses (its row deleted by a conditional delete) and the prover takes the domain. A verified site
is re-checked every ``ADNET_SITE_RECHECK_HOURS`` by the ``site-checks`` job; a failed check is retried an hour later
and the second failure in a row lapses it (one transient failure of the publisher's server is forgiven; a
definitive one costs at most an hour of earnings). The owner's own checks count the same way.

Every change of a site's verification is announced (``adnet.core.changes``): serving reads ``Site.verified``.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tortoise.exceptions import IntegrityError
from tortoise.expressions import F, Q
from tortoise.transactions import in_transaction

from adnet.accounts.fetching import AddressRefused, Fetcher, FetchFailed, FetchPolicy
from adnet.accounts.models import ProofMethod, Site, SiteState, VerifiedDomain
from adnet.accounts.proofs import METHODS, PATHS, Claimant, Instruction, ads_txt_line, instructions, read
from adnet.config import Settings
from adnet.core import changes
from adnet.core.errors import Conflict, Invalid
from adnet.webhooks import outbox
from adnet.webhooks.models import WebhookEventType

log = logging.getLogger(__name__)

LAPSE_AFTER = 2  # consecutive failed checks that lapse a verified site
RETRY_AFTER = timedelta(hours=1)  # when a verified site whose check failed is checked again
RECHECK_BATCH = 20  # verified sites re-checked per run of the job, at most
CONCURRENT_CHECKS = 4
TAKE_ATTEMPTS = 3
MAX_FAILURE_TEXT = 300  # Site.check_failure's column
TAKEN_REASON = "another site holds this domain verified and still proves it"
# What a document that was read says when it does not prove a site.
MISSING = {ProofMethod.META_TAG: "no adnet meta tag with this site's token",
           ProofMethod.WELL_KNOWN: "no line with this site's token",
           ProofMethod.ADS_TXT: "no line names adnet and this publisher"}


@dataclass(frozen=True)
class Reading:
    """One proof document of a domain as adnet fetched it: what it proves, or why it could not be read."""

    method: ProofMethod
    url: str
    found: frozenset[str] = frozenset()
    failure: str | None = None
    answered: bool = True  # the site answered (any HTTP status), as opposed to no connection at all

    def outcome(self, claimant: Claimant) -> str:
        """This document's word on ``claimant``, for the owner."""
        if self.failure is not None:
            return self.failure
        if claimant.shown_by(self.method, self.found):
            return "proof found"
        return MISSING[self.method]


class Inspection:
    """The proof documents of one domain, each fetched at most once however many sites' proofs are looked for in
    them: the prover's and the current holder's are judged on the same documents."""

    def __init__(self, fetcher: Fetcher, domain: str, ads_system: str) -> None:
        self.fetcher = fetcher
        self.domain = domain
        self.ads_system = ads_system
        self.readings: dict[ProofMethod, Reading] = {}
        self._schemes = fetcher.policy.schemes

    async def proof_of(self, claimant: Claimant) -> ProofMethod | None:
        """The first method whose document proves ``claimant``, fetching no more than needed."""
        for method in METHODS:
            if claimant.shown_by(method, (await self.reading(method)).found):
                return method
        return None

    async def reading(self, method: ProofMethod) -> Reading:
        """The document of ``method``, fetched on first use."""
        if method not in self.readings:
            self.readings[method] = await self._read(method)
        return self.readings[method]

    def failure_of(self, claimant: Claimant) -> CheckFailure:
        """Why the documents read so far do not prove ``claimant``."""
        readings = list(self.readings.values())
        answered = any(reading.answered for reading in readings)
        summary = "; ".join(f"{PATHS[reading.method]}: {reading.outcome(claimant)}" for reading in readings)
        return CheckFailure(
            code="token_absent" if answered else "fetch_failed",
            reason=(("no proof found: " if answered else "could not fetch the site: ") + summary)[:MAX_FAILURE_TEXT],
            message=(f"No proof of this site was found on {self.domain} ({summary})." if answered
                     else f"adnet could not fetch {self.domain} ({summary})."),
            checks=[{"method": reading.method.value, "url": reading.url, "result": reading.outcome(claimant)}
                    for reading in readings])

    async def _read(self, method: ProofMethod) -> Reading:
        path = PATHS[method]
        failure: FetchFailed | None = None
        url = ""
        for scheme in self._schemes:
            url = self.fetcher.url(scheme, self.domain, path)
            try:
                page = await self.fetcher.get(url, scope=self.domain)
            except AddressRefused as refused:
                return Reading(method, url, failure=refused.reason, answered=False)
            except FetchFailed as exc:
                failure = exc
                continue
            self._schemes = (scheme,)  # the scheme that answered serves the other documents
            if page.status != 200:
                return Reading(method, page.url, failure=f"HTTP {page.status}")
            return Reading(method, page.url, found=read(method, page.text, ads_system=self.ads_system,
                                                        truncated=page.truncated))
        return Reading(method, url, failure=failure.reason if failure else "not fetched", answered=False)


@dataclass(frozen=True)
class CheckFailure:
    """Why a check found no proof: ``token_absent`` (the site answered without it) or ``fetch_failed`` (nothing
    could be fetched), the short reason stored on the site, the sentence of the refusal, and each document's
    outcome."""

    code: str
    reason: str
    message: str
    checks: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class Held:
    """The domain is held by another site."""

    site_id: str


@dataclass(frozen=True)
class RecheckReport:
    """What one run of the re-check job did."""

    checked: int = 0
    kept: int = 0
    failed: int = 0
    lapsed: int = 0


def claimant_of(site: Site) -> Claimant:
    """What proves ``site`` (its publisher must be loaded or its id known)."""
    return Claimant(token=site.verification_token, publisher_id=str(site.publisher_id))


@dataclass(frozen=True)
class SiteChecks:
    """Checking sites' proofs: the fetcher, adnet's name in ads.txt (and its certification authority id, if it has
    one), the re-check interval, and the methods the job never re-checks (``demo``, outside production)."""

    fetcher: Fetcher
    ads_system: str
    recheck_every: timedelta
    exempt: frozenset[ProofMethod] = frozenset()
    certification_id: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> SiteChecks:
        return cls(fetcher=Fetcher(FetchPolicy.for_environment(settings.production, settings.site_check_port)),
                   ads_system=settings.ads_system_domain,
                   recheck_every=timedelta(hours=settings.site_recheck_hours),
                   exempt=frozenset() if settings.production else frozenset({ProofMethod.DEMO}),
                   certification_id=settings.ads_txt_certification_id)

    def instructions(self, site: Site) -> list[Instruction]:
        """What the site's owner publishes to prove its domain, for each method."""
        return instructions(site.domain, claimant_of(site), self.ads_system, self.certification_id)

    def ads_txt_line(self, site: Site) -> str:
        """The line the site's ads.txt carries to authorise adnet to sell its inventory (and to prove the domain)."""
        return ads_txt_line(self.ads_system, str(site.publisher_id), self.certification_id)

    async def verify(self, site: Site, now: datetime) -> Site:
        """Look for ``site``'s proof now and answer the site as it stands after: verified (its domain taken from
        nobody or from a holder whose proof is gone), or the failure recorded and raised: Invalid
        ``token_absent`` / ``fetch_failed`` (with each document's outcome in ``checks``), Conflict
        ``domain_taken`` when another site holds the domain and still proves it."""
        inspection = Inspection(self.fetcher, site.domain, self.ads_system)
        method = await inspection.proof_of(claimant_of(site))
        if ProofMethod.ADS_TXT in inspection.readings:
            await _record_ads_txt(site, inspection, now)
        if method is None:
            failure = inspection.failure_of(claimant_of(site))
            state = await _record_failure(site, failure.reason, now)
            raise Invalid(failure.code, failure.message, checks=failure.checks, state=state.value)
        for _ in range(TAKE_ATTEMPTS):
            held = await _take(site, method, now)
            if held is None:
                return await Site.get(id=site.id).select_related("publisher")
            holder = await Site.get(id=held.site_id)
            if await inspection.proof_of(claimant_of(holder)) is not None:
                await Site.filter(id=site.id).update(last_checked_at=now, check_failure=TAKEN_REASON)
                raise Conflict("domain_taken", "Another site holds this domain verified and still proves it.",
                               state=site.state.value)
            await _lapse(holder, "another site proved the domain and this site's proof was gone", now)
        raise Conflict("domain_taken", "Other sites are taking this domain at this moment; check again.",
                       state=site.state.value)

    async def recheck_due(self, now: datetime, limit: int = RECHECK_BATCH) -> RecheckReport:
        """Re-check up to ``limit`` verified sites that are due: last checked ``recheck_every`` ago (an hour ago
        after a failure), oldest first. Each is claimed by a conditional update of its ``last_checked_at`` first,
        so processes running the job at once never check one site twice."""
        due = (Q(last_checked_at__isnull=True) | Q(last_checked_at__lt=now - self.recheck_every)
               | Q(failed_checks__gt=0, last_checked_at__lt=now - RETRY_AFTER))
        query = Site.filter(due, verified=True)
        if self.exempt:
            query = query.filter(Q(proof_method__isnull=True) | ~Q(proof_method__in=list(self.exempt)))
        sites = await query.order_by("last_checked_at", "id").limit(limit)
        gate = asyncio.Semaphore(CONCURRENT_CHECKS)

        async def check(site: Site) -> str | None:
            async with gate:
                return await self._recheck(site, now)

        outcomes = [outcome for outcome in await asyncio.gather(*(check(site) for site in sites)) if outcome]
        report = RecheckReport(checked=len(outcomes), kept=outcomes.count("kept"),
                               failed=outcomes.count("failed") + outcomes.count("lapsed"),
                               lapsed=outcomes.count("lapsed"))
        if report.checked:
            log.info("sites re-checked checked=%d kept=%d failed=%d lapsed=%d", report.checked, report.kept,
                     report.failed, report.lapsed)
        return report

    async def _recheck(self, site: Site, now: datetime) -> str | None:
        claimed = await Site.filter(id=site.id, verified=True, last_checked_at=site.last_checked_at).update(
            last_checked_at=now)
        if not claimed:
            return None  # another process is checking it, or it changed meanwhile
        inspection = Inspection(self.fetcher, site.domain, self.ads_system)
        method = await inspection.proof_of(claimant_of(site))
        await _record_ads_txt(site, inspection, now)
        if method is not None:
            await Site.filter(id=site.id, verified=True).update(proof_method=method, last_checked_at=now,
                                                                check_failure="", failed_checks=0)
            return "kept"
        state = await _record_failure(site, inspection.failure_of(claimant_of(site)).reason, now)
        return "lapsed" if state is SiteState.LAPSED else "failed"


async def _record_ads_txt(site: Site, inspection: Inspection, now: datetime) -> None:
    """Record whether the site's ads.txt carries adnet's line for its publisher, read in the same inspection as its
    proof (the re-check fetches it when the proof was found before it; the owner's own check records it only when
    it got that far, so a check stops at the first proof): a file that could not be read counts as without the
    line, as a buyer reading it would find none."""
    reading = await inspection.reading(ProofMethod.ADS_TXT)
    listed = reading.failure is None and claimant_of(site).shown_by(ProofMethod.ADS_TXT, reading.found)
    await Site.filter(id=site.id).update(ads_txt_listed=listed, ads_txt_checked_at=now)
    site.ads_txt_listed, site.ads_txt_checked_at = listed, now


async def mark_verified(site: Site, method: ProofMethod, now: datetime) -> None:
    """Give ``site`` its domain without a check (development demo data, tests): Conflict ``domain_taken`` when
    another site holds it."""
    held = await _take(site, method, now)
    if held is not None:
        raise Conflict("domain_taken", "Another site holds this domain verified.")


async def _take(site: Site, method: ProofMethod, now: datetime) -> Held | None:
    """Make ``site`` the holder of its domain, proven by ``method``: insert its ``verified_domain`` row (the
    primary key decides between racing provers) and mark the site verified, in one transaction. None when the site
    holds the domain now, Held when another site does."""
    async with in_transaction():
        taken = False
        try:
            async with in_transaction():  # a savepoint: a lost race leaves this transaction usable
                await VerifiedDomain.create(domain=site.domain, site_id=site.id, verified_at=now)
            taken = True
        except IntegrityError:
            hold = await VerifiedDomain.get_or_none(domain=site.domain)
            if hold is not None and hold.site_id != site.id:
                return Held(hold.site_id)
            if hold is None:
                raise Conflict("domain_taken", "Other sites are taking this domain at this moment; check again.",
                               state=site.state.value) from None
        values: dict[str, Any] = {"verified": True, "state": SiteState.VERIFIED, "proof_method": method,
                                  "last_checked_at": now, "check_failure": "", "failed_checks": 0}
        if taken:
            values["verified_at"] = now
            await _tell_owner(site, WebhookEventType.SITE_VERIFIED, now, method=method.value)
        await Site.filter(id=site.id).update(**values)
    if taken:
        log.info("site verified site=%s domain=%s method=%s", site.id, site.domain, method.value)
        changes.announce(site.id)
    return None


async def release_domain(site: Site, now: datetime) -> bool:
    """Give up the domain ``site`` holds verified, if it holds it (its owner deleted it): another site may then
    prove the domain. False when it held nothing."""
    return await _lapse(site, "the site was deleted", now)


async def _lapse(site: Site, reason: str, now: datetime) -> bool:
    """Take ``site``'s domain from it (if it still holds it): its row deleted, the site ``lapsed``, in one
    transaction. False when it held nothing any more."""
    async with in_transaction():
        removed = await VerifiedDomain.filter(domain=site.domain, site_id=site.id).delete()
        if removed:
            await Site.filter(id=site.id).update(verified=False, state=SiteState.LAPSED, last_checked_at=now,
                                                 check_failure=reason[:MAX_FAILURE_TEXT], failed_checks=0)
            await _tell_owner(site, WebhookEventType.SITE_LAPSED, now, reason=reason[:MAX_FAILURE_TEXT])
    if removed:
        log.info("site lapsed site=%s domain=%s reason=%s", site.id, site.domain, reason)
        changes.announce(site.id)
    return bool(removed)


async def _tell_owner(site: Site, event_type: WebhookEventType, now: datetime, **data: str) -> None:
    """Write a webhook event about ``site`` for its publisher (inside the transaction of the change)."""
    wallet = await Site.filter(id=site.id).first().values_list("publisher__wallet", flat=True)
    await outbox.record(str(wallet), event_type, {"site_id": site.id, "domain": site.domain, **data}, now)


async def _record_failure(site: Site, reason: str, now: datetime) -> SiteState:
    """Record a check that found no proof; a verified site's ``LAPSE_AFTER``-th failure in a row lapses it.
    Returns the site's state after."""
    counted = await Site.filter(id=site.id, verified=True).update(
        failed_checks=F("failed_checks") + 1, last_checked_at=now, check_failure=reason)
    if not counted:
        await Site.filter(id=site.id).update(last_checked_at=now, check_failure=reason)
        return (await Site.get(id=site.id)).state
    failures = (await Site.get(id=site.id)).failed_checks
    if failures >= LAPSE_AFTER and await _lapse(site, reason, now):
        return SiteState.LAPSED
    return SiteState.VERIFIED

