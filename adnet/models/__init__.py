"""adnet's whole data model, grouped by area; Tortoise loads it as the app ``models``.

Rules that guard money and counts are unique keys and version columns here, so the database itself refuses
a duplicate or a lost update.
"""

import decimal

# Token amounts are integers up to 40 digits held in decimals; the default 28-digit context would round them.
decimal.getcontext().prec = 80

from adnet.models.accounts import Advertiser, AuthNonce, Publisher, Session, Site  # noqa: E402
from adnet.models.campaigns import Campaign, CampaignStatus, Creative, CreativeStatus, MediaType  # noqa: E402
from adnet.models.chain import ChainBinding, ChainCursor, Deposit, DepositStatus  # noqa: E402
from adnet.models.events import DedupKey, EventType, SiteDailyStat, TrackingEvent  # noqa: E402
from adnet.models.interactions import Interaction, SessionStatus, SurveySession  # noqa: E402
from adnet.models.ledger import LedgerAccount, LedgerPosting, LedgerTransaction  # noqa: E402
from adnet.models.rewards import (  # noqa: E402
    Claim,
    ClaimPurpose,
    ClaimStatus,
    Completion,
    Exchange,
    SignerNonce,
    Task,
    TaskAttempt,
    TaskKind,
    TaskMessageNonce,
    TaskSurface,
    TaskVisit,
    Withdrawal,
    WithdrawalStatus,
)

__all__ = [
    "Advertiser", "AuthNonce", "Campaign", "CampaignStatus", "ChainBinding", "ChainCursor", "Claim",
    "ClaimPurpose", "ClaimStatus", "Completion", "Creative", "CreativeStatus", "DedupKey", "Deposit",
    "DepositStatus", "EventType", "Exchange", "Interaction", "LedgerAccount", "LedgerPosting",
    "LedgerTransaction", "MediaType", "Publisher", "Session", "SessionStatus", "SignerNonce", "Site",
    "SiteDailyStat", "SurveySession", "Task", "TaskAttempt", "TaskKind", "TaskMessageNonce", "TaskSurface",
    "TaskVisit", "TrackingEvent", "Withdrawal", "WithdrawalStatus",
]
