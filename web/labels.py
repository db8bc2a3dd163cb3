"""The names people read for adnet's fixed lists: campaign categories, task and unit kinds, media and proof
methods. Every page writes a value of these lists through this one catalogue (the portal's ``label`` filter), and
docs/advertisers.md lists the same names (``tests/test_docs.py`` checks it), so "DeFi" is "DeFi" everywhere and
never "Defi" or "defi"."""

from __future__ import annotations

from enum import StrEnum

from adnet.accounts.models import ProofMethod
from adnet.campaigns.models import Category, MediaType
from adnet.tasks.models import TaskKind

LABELS: dict[StrEnum, str] = {
    Category.DEFI: "DeFi", Category.EXCHANGE: "Exchange", Category.WALLET: "Wallet", Category.NFT: "NFT",
    Category.GAMING: "Gaming", Category.GAMBLING: "Gambling", Category.DAO: "DAO",
    Category.INFRASTRUCTURE: "Infrastructure", Category.EDUCATION: "Education", Category.MEDIA: "Media",
    Category.OTHER: "Other",
    TaskKind.VISIT_URL: "Visit a page", TaskKind.SIGN_MESSAGE: "Sign a message",
    TaskKind.ONCHAIN_EVENT: "On-chain action", TaskKind.QUIZ: "Quiz", TaskKind.POLL: "Poll",
    TaskKind.FEEDBACK: "Feedback", TaskKind.SURVEY: "Survey",
    MediaType.IMAGE: "Image", MediaType.VIDEO: "Video",
    ProofMethod.META_TAG: "Meta tag", ProofMethod.WELL_KNOWN: "Well-known file", ProofMethod.ADS_TXT: "ads.txt line",
    ProofMethod.DEMO: "Demo data",
}
# What a standalone unit or an ad unit shows, by the kind the embed asks for (``BANNER`` and the unit kinds).
KIND_LABELS = {"BANNER": "Banner", **{kind.value: LABELS[kind] for kind in TaskKind}}


def label(value: object) -> str:
    """The name people read for ``value`` (a member of one of the lists, or its stored text); the text itself for
    a value of no list."""
    if isinstance(value, StrEnum) and value in LABELS:
        return LABELS[value]
    text = str(value)
    return KIND_LABELS.get(text) or next((name for member, name in LABELS.items() if member.value == text), text)


# Why a campaign did or did not fill a slot, by the reason the decision explainer names
# (``adnet.delivery.explainer.REASONS``, ``PRIVATE_REASONS``, and its candidates): the API answers the code with
# these words, the portal shows them, and docs/advertisers.md lists the same pairs (``tests/test_docs.py``).
DECISION_WORDS = {
    "candidate": "Candidate: every rule allows it; the weighted draw decides",
    "shown": "Shown",
    "other_campaigns": "Other advertisers' campaigns that were candidates",
    "campaign_draft": "Campaign is a draft, not submitted for review",
    "campaign_in_review": "Campaign is waiting for review",
    "campaign_paused": "Campaign is paused",
    "campaign_ended": "Campaign has ended",
    "campaign_rejected": "Campaign was rejected in review",
    "not_loaded": "Approved, not yet loaded by serving",
    "below_floor": "Price below the site's floor for this placement",
    "placement_excluded": "Campaign does not run in this placement",
    "site_excluded": "Site left out by the campaign's site rules",
    "site_blocked": "Campaign, advertiser or category blocked by the site",
    "no_approved_creative": "No approved creative",
    "no_creative_of_size": "No creative of this size",
    "not_started": "Campaign has not started yet",
    "ended": "Campaign's end date has passed",
    "budget_exhausted": "Budget spent",
    "daily_cap_reached": "Daily cap reached",
    "targeting_keywords": "Keyword targeting",
    "targeting_schedule": "Schedule (days and hours)",
    "targeting_device": "Device targeting",
    "targeting_os": "Operating system targeting",
    "targeting_audience": "Wallet audience targeting",
    "targeting_country": "Country targeting",
    "frequency_capped": "Viewer reached the frequency cap",
    "bot_user_agent": "Filtered: a crawler's User-Agent (events not billed)",
}
