"""Where a campaign may be shown and paid: one rule, decided by ``refusal``, for serving and for every path that
pays.

A campaign (or a unit of no campaign) may be shown or paid on a site only when each of these holds; the first that
fails names the refusal:

- ``site_inactive``: the site is registered and active (not switched off, not deleted);
- ``site_unverified``: its owner proved its domain. Asked only where something is paid (a billed event, a unit's
  answer, a task's completion, a conversion) or offered (a unit or an attached task at serve time: a viewer is not
  asked to earn where the answer would be refused). A banner is shown on an unverified site, and its events are
  recorded without being billed;
- ``site_excluded``: the campaign's own site rules let it run there: never on a site of its ``siteDeny``, and only
  on the sites of its ``siteAllow`` when it names any;
- ``site_blocked``: the site's owner does not block the campaign, its advertiser or its category (``Controls``);
- ``kind_refused``: the site takes what is shown: a banner always; an attached task unless the site refuses attached
  tasks or that task kind; a standalone unit unless it refuses units or that unit kind.

``refusal`` is pure: it decides from the facts it is given. Serving gives it the entries of its index, in memory
(``adnet.delivery.index``: the site's ``SiteEntry``, a ``CampaignEntry`` or a unit's ``TaskEntry``), and so does
tracking; unit answers and task completions read the same facts from the database in the statement they read the
task with (``FACT_COLUMNS``, ``facts_of``), so a change is exact for them across processes, and refuse with
``refuse_unless_allowed``. A path that pays later (conversions) asks the same function with the facts of the
click's site and campaign.

``Controls`` is what a site's owner blocks and refuses, compiled once from what the site stores (``controls_of``);
the owner edits it through ``adnet.delivery.controls``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from adnet.accounts.models import Site
from adnet.campaigns.models import Campaign
from adnet.core.errors import Conflict, NotFound

log = logging.getLogger(__name__)

REFUSALS = ("site_inactive", "site_unverified", "site_excluded", "site_blocked", "kind_refused")


@dataclass(frozen=True)
class Controls:
    """A site's controls as the rule applies them: the campaigns, advertisers and categories it blocks, whether it
    shows banners' attached tasks and standalone units, and the task kinds it refuses (attached or standalone)."""

    advertisers: frozenset[str] = frozenset()
    campaigns: frozenset[str] = frozenset()
    categories: frozenset[str] = frozenset()
    attached_tasks: bool = True
    units: bool = True
    task_kinds: frozenset[str] = frozenset()

    def admits(self, campaign_id: str | None, advertiser_id: str | None, category: str | None) -> bool:
        """Whether the site shows a campaign's banner or unit (a unit of no campaign: always)."""
        return campaign_id is None or not (campaign_id in self.campaigns or advertiser_id in self.advertisers
                                           or category in self.categories)

    def accepts(self, kind: str | None, *, attached: bool = False) -> bool:
        """Whether the site shows this kind: a banner (``kind`` None) always; a task of ``kind`` attached to a banner
        unless the site refuses attached tasks or that kind; a standalone unit of ``kind`` unless it refuses units
        or that kind."""
        if kind is None:
            return True
        if kind in self.task_kinds:
            return False
        return self.attached_tasks if attached else self.units


NO_CONTROLS = Controls()


def controls_of(stored: Mapping[str, Any] | None) -> Controls:
    """What the rule applies for the controls a site stores (written by ``adnet.delivery.controls.set_controls``
    from its checked command; a key it lacks has its default)."""
    if not stored:
        return NO_CONTROLS
    return Controls(advertisers=frozenset(stored.get("blocked_advertisers", ())),
                    campaigns=frozenset(stored.get("blocked_campaigns", ())),
                    categories=frozenset(stored.get("blocked_categories", ())),
                    attached_tasks=bool(stored.get("attached_tasks", True)), units=bool(stored.get("units", True)),
                    task_kinds=frozenset(stored.get("refused_task_kinds", ())))


class SiteFacts(Protocol):
    """What the rule reads of an active site."""

    @property
    def id(self) -> str: ...

    @property
    def verified(self) -> bool: ...

    @property
    def controls(self) -> Controls: ...


class CampaignTerms(Protocol):
    """What the rule reads of a campaign (every attribute None or empty for a unit of no campaign)."""

    @property
    def campaign_id(self) -> str | None: ...

    @property
    def advertiser_id(self) -> str | None: ...

    @property
    def category(self) -> str | None: ...

    @property
    def site_allow(self) -> frozenset[str]: ...

    @property
    def site_deny(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class StoredSite:
    """An active site's facts as read from the database."""

    id: str
    verified: bool
    controls: Controls = NO_CONTROLS


@dataclass(frozen=True)
class Terms:
    """A campaign's facts as read from the database."""

    campaign_id: str | None = None
    advertiser_id: str | None = None
    category: str | None = None
    site_allow: frozenset[str] = frozenset()
    site_deny: frozenset[str] = frozenset()


NO_CAMPAIGN = Terms()


def refusal(site: SiteFacts | None, campaign: CampaignTerms, kind: str | None = None, *, attached: bool = False,
            paid: bool) -> str | None:
    """Why ``campaign`` may not show ``kind`` (None: its banner; else a task or unit kind, ``attached`` to a banner
    or standalone) on ``site`` (None: no active site of that id), named as in ``REFUSALS``; None when it may.
    ``paid``: whether something is paid or offered (see the module's docstring), which a site must be verified
    for."""
    if site is None:
        return "site_inactive"
    if paid and not site.verified:
        return "site_unverified"
    if site.id in campaign.site_deny or (campaign.site_allow and site.id not in campaign.site_allow):
        return "site_excluded"
    if not site.controls.admits(campaign.campaign_id, campaign.advertiser_id, campaign.category):
        return "site_blocked"
    if not site.controls.accepts(kind, attached=attached):
        return "kind_refused"
    return None


def refuse_unless_allowed(site: SiteFacts | None, campaign: CampaignTerms, kind: str, *, attached: bool,
                          subject: str) -> None:
    """For a path that pays a viewer (a unit's answer, a task's completion), before anything is written: NotFound
    ``site`` for an inactive one (as serving answers), Conflict ``not_allowed_on_site`` for any other refusal. The
    reason is logged, not told, as tracking keeps its reasons from clients."""
    reason = refusal(site, campaign, kind, attached=attached, paid=True)
    if reason == "site_inactive":
        raise NotFound.of("site")
    if reason is not None:
        log.info("refused on site site=%s campaign=%s kind=%s reason=%s", site.id if site else "-",
                 campaign.campaign_id or "-", kind, reason)
        raise Conflict("not_allowed_on_site", f"This {subject} is not offered on this site; nothing was recorded.")


# Reading the facts from the database, for the paths that pay without the serving index. A statement joins the site
# as ``site`` and the campaign as ``campaign`` (either may be missing) and selects ``FACT_COLUMNS``.
FACT_COLUMNS = ("site.id AS rule_site_id, site.active AS rule_site_active, site.verified AS rule_site_verified, "
                "site.controls AS rule_site_controls, campaign.id AS rule_campaign_id, "
                "campaign.advertiser_id AS rule_advertiser_id, campaign.category AS rule_category, "
                "campaign.site_allow AS rule_site_allow, campaign.site_deny AS rule_site_deny")
_FACT_KEYS = ("rule_site_id", "rule_site_active", "rule_site_verified", "rule_site_controls", "rule_campaign_id",
              "rule_advertiser_id", "rule_category", "rule_site_allow", "rule_site_deny")


def facts_of(row: dict[str, Any]) -> tuple[StoredSite | None, Terms]:
    """The site (None when there is no active one) and the campaign the ``FACT_COLUMNS`` of ``row`` hold, taken
    out of ``row``."""
    values = {key: row.pop(key) for key in _FACT_KEYS}
    site = None
    if values["rule_site_id"] is not None and values["rule_site_active"]:
        site = StoredSite(id=str(values["rule_site_id"]), verified=bool(values["rule_site_verified"]),
                          controls=controls_of(_SITE_FIELDS["controls"].to_python_value(values["rule_site_controls"])))
    if values["rule_campaign_id"] is None:
        return site, NO_CAMPAIGN
    return site, Terms(campaign_id=str(values["rule_campaign_id"]), advertiser_id=str(values["rule_advertiser_id"]),
                       category=str(values["rule_category"]),
                       site_allow=frozenset(_CAMPAIGN_FIELDS["site_allow"].to_python_value(values["rule_site_allow"])
                                            or ()),
                       site_deny=frozenset(_CAMPAIGN_FIELDS["site_deny"].to_python_value(values["rule_site_deny"])
                                           or ()))


def terms_of(campaign: Campaign) -> Terms:
    """A campaign's facts from its model (read with at least ``TERMS_FIELDS``)."""
    return Terms(campaign_id=campaign.id, advertiser_id=campaign.advertiser_id,
                 category=campaign.category.value, site_allow=frozenset(campaign.site_allow or ()),
                 site_deny=frozenset(campaign.site_deny or ()))


TERMS_FIELDS = ("id", "advertiser_id", "category", "site_allow", "site_deny")
# Plain statements return JSON columns as their drivers do (text on SQLite and asyncpg's jsonb): the model's fields
# decode them as the ORM does.
_SITE_FIELDS = Site._meta.fields_map
_CAMPAIGN_FIELDS = Campaign._meta.fields_map
