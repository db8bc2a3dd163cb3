"""A wallet audience in the benchmark's demo (``python -m bench.run --wallet-audience``): the demo's last campaign
is given a wallet audience (holders of the development SOV token), and ``PROVEN_WALLETS`` wallets are written as
proven and evaluated against it, as the audience job would have left them (one in two a holder; none due again);
half of the serve requests then carry the audience pass of one of them, so serving checks passes and reads
memberships on every other request."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from adnet.audiences.evaluation import rules_digest
from adnet.audiences.models import AudienceWallet
from adnet.audiences.passes import issue_pass
from adnet.campaigns.models import Campaign
from adnet.campaigns.targeting import Targeting
from adnet.chain.models import ChainBinding
from adnet.config import load_settings
from adnet.db import config as db

PROVEN_WALLETS = 2_000
PASSES = 200


async def add_wallet_audience(environ: dict[str, str], campaign_id: str) -> list[str]:
    """Target ``campaign_id`` at SOV holders, write the proven wallets, and return audience passes of some."""
    settings = load_settings(environ)
    await db.open_database(settings.database_url)
    try:
        sov_token = (await ChainBinding.first()).sov_token
        campaign = await Campaign.get(id=campaign_id)
        rules = {**(campaign.targeting or {}),
                 "audience_groups": [[{"kind": "erc20", "contract": sov_token, "min_amount": "1"}]]}
        targeting = Targeting.model_validate(rules)
        await Campaign.filter(id=campaign_id).update(targeting=targeting.stored())
        key = targeting.audience_groups[0][0].key
        now = datetime.now(UTC)
        wallets = [f"0x{index:040x}" for index in range(1, PROVEN_WALLETS + 1)]
        await AudienceWallet.bulk_create([
            AudienceWallet(wallet=wallet, proven_at=now, evaluated_at=now, expires_at=now + timedelta(days=1),
                           evaluated=[key], matched=[key] if index % 2 == 0 else [], rules_digest=rules_digest([key]))
            for index, wallet in enumerate(wallets)])
        return [issue_pass(settings.tracking_secret, wallet, now + timedelta(hours=1)) for wallet in wallets[:PASSES]]
    finally:
        await db.close_database()
