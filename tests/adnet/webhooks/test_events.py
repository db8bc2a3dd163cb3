"""Each event an account can hear is written to the outbox by the change it reports, with its data: deposits
credited (a real top-up on the embedded chain), campaigns approved, rejected and ended (by the owner, the date or
the budget), withdrawals redeemed or released, sites verified or lapsed; and the signature a receiver checks."""

from __future__ import annotations

import random
from datetime import timedelta

from tortoise.transactions import in_transaction

from adnet.accounts.models import ProofMethod
from adnet.accounts.ownership import mark_verified, release_domain
from adnet.campaigns import lifecycle, review
from adnet.campaigns.budgets import ALLOCATION_KIND
from adnet.campaigns.commands import Rejection
from adnet.campaigns.models import CampaignStatus
from adnet.money import claims, ledger
from adnet.money.holders import account_ref
from adnet.money.models import Withdrawal
from adnet.webhooks import signing
from adnet.webhooks.endpoints import NewWebhookEndpoint, add_endpoint
from adnet.webhooks.models import WebhookEvent, WebhookEventType
from tests.auth_helpers import bearer, sign_in
from tests.chain.helpers import deposit, user
from tests.factories import EPOCH, G, fund, make_advertiser, make_campaign, make_publisher, make_site


async def listen(wallet: str) -> None:
    await add_endpoint(wallet, NewWebhookEndpoint(url="https://hooks.example/in", events=list(WebhookEventType)),
                       EPOCH, random.Random(1), production=False)


async def events() -> list[tuple[str, dict]]:
    """The recorded events in the order of their time (ids sort by the wall clock's millisecond only)."""
    return [(event.type.value, event.payload) for event in await WebhookEvent.all().order_by("created_at", "id")]


async def test_a_credited_top_up_is_told_to_the_sites_owner(client, chain):
    account = user(2)
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    await listen(account.address.lower())
    receipt = await deposit(chain, account, 3 * G, account_ref(site.id))
    tx_hash = receipt["transactionHash"].to_0x_hex()
    credited = await client.post("/api/publishers/topup", json={"wallet": account.address, "siteId": site.id,
                                                                "txHash": tx_hash}, headers=bearer(token))
    assert credited.status_code == 201
    [(kind, data)] = await events()
    assert kind == "deposit.credited"
    assert data == {"depositId": (await credited.get_json())["depositId"], "siteId": site.id, "txHash": tx_hash,
                    "token": "G$", "amount": "3"}


async def test_campaign_reviews_and_ends_are_told_to_the_advertiser(app, clock):
    advertiser = await make_advertiser()
    await listen(advertiser.wallet)
    approved = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
    rejected = await make_campaign(advertiser, status=CampaignStatus.REVIEW)
    dated = await make_campaign(advertiser, ends_at=clock.now() + timedelta(hours=1))
    await review.approve_campaign("0xoperator", approved.id, clock.now())
    clock.advance(seconds=1)
    await review.reject_campaign("0xoperator", rejected.id, Rejection(reason="Blurry banner"), clock.now())
    clock.advance(seconds=1)
    await lifecycle.end(advertiser.wallet, approved.id, clock.now())
    clock.advance(hours=2)
    await lifecycle.settle_due(clock.now())

    told = await events()
    assert [(kind, data["campaignId"], data.get("reason")) for kind, data in told] == [
        ("campaign.approved", approved.id, None), ("campaign.rejected", rejected.id, "Blurry banner"),
        ("campaign.ended", approved.id, "ended"), ("campaign.ended", dated.id, "end_date")]
    assert told[0][1]["status"] == "approved" and told[0][1]["name"] == approved.name


async def test_withdrawals_redeemed_or_released_are_told_to_the_wallet(client, clock):
    account = user(2)
    token = await sign_in(client, account)
    site = await make_site(await make_publisher(account.address.lower()))
    await fund(ledger.site(site.id), 5 * G)
    await listen(account.address.lower())
    ids = []
    for amount in ("2", "3"):
        response = await client.post("/api/publishers/withdraw", json={"wallet": account.address, "siteId": site.id,
                                                                       "amount": amount}, headers=bearer(token))
        ids.append((await response.get_json())["withdrawalId"])
    redeemed = await Withdrawal.get(id=ids[0]).select_related("claim")
    assert await claims.mark_redeemed(redeemed.claim.claim_ref, "0x" + "ab" * 32, clock.now())
    assert await claims.expire_due(clock.now() + timedelta(days=30)) == 1

    assert [(kind, data["withdrawalId"], data["amount"], data["status"]) for kind, data in await events()] == [
        ("withdrawal.redeemed", ids[0], "2", "redeemed"), ("withdrawal.released", ids[1], "3", "released")]


async def test_a_sites_domain_taken_and_lost_is_told_to_its_owner(app, clock):
    publisher = await make_publisher()
    site = await make_site(publisher, verified=False)
    await listen(publisher.wallet)
    await mark_verified(site, ProofMethod.META_TAG, clock.now())
    clock.advance(seconds=1)
    await release_domain(site, clock.now())
    assert await events() == [
        ("site.verified", {"siteId": site.id, "domain": site.domain, "method": "meta_tag"}),
        ("site.lapsed", {"siteId": site.id, "domain": site.domain, "reason": "the site was deleted"})]


def test_a_receiver_refuses_a_forged_altered_or_replayed_delivery():
    body = b'{"id":"whe_1","type":"site.verified"}'
    header = signing.sign("s3cret", 1_700_000_000, body)
    assert signing.verify("s3cret", header, body, now=1_700_000_100)
    assert not signing.verify("s3cret", header, body + b" ", now=1_700_000_100)  # altered
    assert not signing.verify("other", header, body, now=1_700_000_100)  # forged
    assert not signing.verify("s3cret", header, body, now=1_700_000_000 + signing.TOLERANCE_SECONDS + 1)  # replayed
    assert not signing.verify("s3cret", header.replace("t=1700000000", "t=1700000300"), body, now=1_700_000_300)
    assert not signing.verify("s3cret", "v1=abc", body, now=1_700_000_000)


async def test_a_campaign_that_spent_its_funded_budget_is_told_out_of_budget(app, clock):
    advertiser = await make_advertiser()
    await listen(advertiser.wallet)
    campaign = await make_campaign(advertiser, budget=G, funded=0)
    await fund(ledger.advertiser(advertiser.id), G)
    async with in_transaction():
        await ledger.book(ALLOCATION_KIND, "allocation-1", [(ledger.advertiser(advertiser.id), -G),
                                                           (ledger.campaign(campaign.id), G)], now=clock.now())
        await ledger.book("test_spend", "spend-1", [(ledger.campaign(campaign.id), -G), (ledger.platform("G$"), G)],
                          now=clock.now())
    assert await lifecycle.settle_due(clock.now()) == [campaign.id]
    assert [(kind, data["campaignId"], data["reason"]) for kind, data in await events()] == [
        ("campaign.ended", campaign.id, "out_of_budget")]
