"""``adnet operators``: the real parser and actions on the test database and chain; a refusal exits 1."""

from __future__ import annotations

import json

from adnet.campaigns.models import Campaign, CampaignStatus, Category, Creative, CreativeStatus
from adnet.cli.main import _parser
from adnet.cli.operators import Context, run_action
from adnet.core.clock import Clock
from adnet.tasks.models import TaskKind
from tests.factories import G, make_campaign, make_creative, make_task


async def run(capsys, settings, chain, *argv: str) -> tuple[int, dict | str]:
    args = _parser().parse_args(["operators", *argv])
    code = await run_action(args, Context(settings, "cli", Clock(), chain))
    out = capsys.readouterr()
    return code, json.loads(out.out) if code == 0 else out.err


async def test_review_approve_reject_rate_and_revenue(app, settings, chain, capsys):
    waiting = await make_campaign(status=CampaignStatus.REVIEW)
    creative = await make_creative(waiting, status=CreativeStatus.REVIEW)
    code, queue = await run(capsys, settings, chain, "review")
    assert code == 0 and [(item["campaignId"], item["id"]) for item in queue["campaigns"]] == [(waiting.id,) * 2]
    assert queue["campaigns"][0]["creatives"][0]["id"] == creative.id
    code, body = await run(capsys, settings, chain, "approve", "campaign", waiting.id)
    assert (code, body["status"]) == (0, "approved")
    assert (await Creative.get(id=creative.id)).status == CreativeStatus.APPROVED
    code, error = await run(capsys, settings, chain, "reject", "campaign", waiting.id, "--reason", "late")
    assert code == 1 and "invalid_transition" in error
    assert (await Campaign.get(id=waiting.id)).status == CampaignStatus.APPROVED
    other = await make_campaign(status=CampaignStatus.REVIEW)
    task = await make_task(kind=TaskKind.QUIZ, campaign=other, config={"question": "Q?", "answers": ["a"]})
    code, body = await run(capsys, settings, chain, "reject", "task", task.id, "--reason", "wrong answer")
    assert (code, body) == (0, {"taskId": task.id, "active": False, "reason": "wrong answer"})
    code, error = await run(capsys, settings, chain, "reject", "task", task.id, "--reason", "again")
    assert code == 1 and "invalid_transition" in error
    code, body = await run(capsys, settings, chain, "category", waiting.id, "gambling")
    assert (code, body) == (0, {"campaignId": waiting.id, "category": "gambling"})
    code, error = await run(capsys, settings, chain, "category", waiting.id, "weapons")
    assert code == 1 and "invalid_field" in error
    assert (await Campaign.get(id=waiting.id)).category == Category.GAMBLING

    code, body = await run(capsys, settings, chain, "rate")
    assert (code, body["rate"]) == (0, "2")
    code, body = await run(capsys, settings, chain, "rate", "set", "4", "--send")
    assert code == 0 and body["txHash"].startswith("0x")
    assert await chain.vault.functions.rate().call() == 4 * G
    code, body = await run(capsys, settings, chain, "revenue")
    assert (code, body["balance"], len(body["days"])) == (0, "0", 30)
    code, body = await run(capsys, settings, chain, "settle")
    assert (code, body) == (0, {"ended": []})
