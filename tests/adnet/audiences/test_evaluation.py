"""The audience job: it runs only in the process that holds its lease, a new leader (a restart) goes on with the
wallets the last one left due, evaluations expire, and wallets not proven again within the window are forgotten
(an opt-out is kept)."""

from __future__ import annotations

from adnet.audiences import wallets
from adnet.audiences.evaluation import AUDIENCE_LEASE, AUDIENCE_WINDOW, MEMBERSHIP_TTL, AudienceJob
from adnet.audiences.models import AudienceWallet
from adnet.campaigns.targeting import Targeting
from adnet.jobs.leases import Lease
from tests.chain.helpers import user
from tests.factories import make_campaign

SENT_NOTHING = {"kind": "txCount", "min": 1}


async def test_the_job_runs_only_where_it_holds_the_lease(app, services, clock):
    await make_campaign(targeting=Targeting.model_validate({"audienceGroups": [[SENT_NOTHING]]}).stored())
    await wallets.proven(user(1).address.lower(), clock.now())
    other_process = Lease(AUDIENCE_LEASE, clock=clock)
    assert await other_process.hold()

    assert await services.jobs.run(AUDIENCE_LEASE) is None  # another process leads: this one stands by
    assert (await AudienceWallet.get(wallet=user(1).address.lower())).evaluated_at is None

    await other_process.release()
    report = await services.jobs.run(AUDIENCE_LEASE)
    assert report.evaluated == 1
    row = await AudienceWallet.get(wallet=user(1).address.lower())
    assert row.evaluated_at == clock.now() and row.expires_at == clock.now() + MEMBERSHIP_TTL


async def test_a_new_leader_goes_on_where_the_last_one_stopped(app, services, clock):
    await make_campaign(targeting=Targeting.model_validate({"audienceGroups": [[SENT_NOTHING]]}).stored())
    for index in (1, 2, 3):
        await wallets.proven(user(index).address.lower(), clock.now())
        clock.advance(seconds=1)
    assert (await AudienceJob(services.chain, clock=clock, batch=2).run_once()).evaluated == 2
    # The process stops; another starts with nothing in memory and finds the one wallet left.
    restarted = AudienceJob(services.chain, clock=clock, batch=2)
    assert (await restarted.run_once()).evaluated == 1
    assert (await restarted.run_once()).evaluated == 0
    assert await AudienceWallet.filter(evaluated_at__isnull=True).count() == 0

    # A changed rule makes every wallet due again; so does an evaluation older than the refresh age.
    await make_campaign(targeting=Targeting.model_validate({"audienceGroups": [[{"kind": "txCount", "min": 5}]]})
                        .stored())
    assert (await restarted.run_once()).evaluated == 2
    assert (await restarted.run_once()).evaluated == 1
    assert (await restarted.run_once()).evaluated == 0


async def test_wallets_not_proven_again_are_forgotten_but_an_opt_out_is_kept(app, services, clock):
    await wallets.proven(user(1).address.lower(), clock.now())
    await wallets.set_targeting(user(2).address.lower(), off=True, now=clock.now())
    clock.advance(seconds=AUDIENCE_WINDOW.total_seconds() + 1)
    await wallets.proven(user(3).address.lower(), clock.now())
    report = await AudienceJob(services.chain, clock=clock).run_once()
    assert report.forgotten == 1
    kept = {row.wallet: row.opted_out for row in await AudienceWallet.all()}
    assert kept == {user(2).address.lower(): True, user(3).address.lower(): False}
