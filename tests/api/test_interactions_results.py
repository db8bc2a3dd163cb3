"""A unit's results over HTTP: JSON and CSV for the advertiser's signed-in wallet only."""

from __future__ import annotations

import csv
import io

from eth_account import Account

from adnet.tasks.models import TaskKind
from tests.api.test_interactions import FEEDBACK, POLL, make_unit, post
from tests.auth_helpers import bearer, sign_in
from tests.factories import make_advertiser, make_site, wallet_address


async def owned_poll(client):
    account = Account.create()
    unit = await make_unit(TaskKind.POLL, POLL, advertiser=await make_advertiser(account.address.lower()))
    return unit, await sign_in(client, account)


async def test_the_owner_reads_the_results(client):
    unit, token = await owned_poll(client)
    site = await make_site()
    for device, option in enumerate(("eth", "celo", "eth")):
        await post(client, unit, site, {"optionId": option}, wallet=wallet_address(), fingerprint=f"device-{device}")
    response = await client.get(f"/api/interactions/{unit.id}/results", headers=bearer(token))
    assert response.status_code == 200 and response.headers["Cache-Control"] == "no-store"
    body = await response.get_json()
    assert (body["unitId"], body["kind"], body["responses"]) == (unit.id, "POLL", 3)
    assert [(option["id"], option["votes"]) for option in body["poll"]["options"]] == [
        ("eth", 2), ("celo", 1), ("fuse", 0)]
    assert "Access-Control-Allow-Origin" not in response.headers


async def test_the_owner_downloads_the_csv(client):
    account = Account.create()
    unit = await make_unit(TaskKind.FEEDBACK, FEEDBACK, advertiser=await make_advertiser(account.address.lower()))
    token = await sign_in(client, account)
    await post(client, unit, await make_site(), {"rating": 4, "text": "=1+1 formula"})
    response = await client.get(f"/api/interactions/{unit.id}/results.csv", headers=bearer(token))
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"] == f'attachment; filename="{unit.id}-responses.csv"'
    lines = (await response.get_data(as_text=True)).splitlines()
    assert lines[0] == "interactionId,createdAt,siteId,wallet,points,gs,rating,text"
    assert lines[1].endswith(",4,'=1+1 formula")


async def test_the_csv_neutralises_a_formula_after_any_separator(client):
    """A viewer's text that a spreadsheet splitting on ``;`` (or ``|``, a tab, a line break) would cut into a cell
    starting a formula is exported with an apostrophe before the formula, wherever it begins."""
    account = Account.create()
    unit = await make_unit(TaskKind.FEEDBACK, FEEDBACK, advertiser=await make_advertiser(account.address.lower()))
    token = await sign_in(client, account)
    texts = ["Nice;=HYPERLINK(\"http://evil.example\")", "a|@SUM(1)", "tab\t+1", "ok, -2+3"]
    for device, text in enumerate(texts):
        await post(client, unit, await make_site(), {"rating": 4, "text": text}, fingerprint=f"device-{device}")
    response = await client.get(f"/api/interactions/{unit.id}/results.csv", headers=bearer(token))
    rows = list(csv.reader(io.StringIO(await response.get_data(as_text=True))))
    assert sorted(row[7] for row in rows[1:]) == sorted([
        "Nice;'=HYPERLINK(\"http://evil.example\")", "a|'@SUM(1)", "tab\t'+1", "ok, '-2+3"])


async def test_results_need_the_owners_session(client):
    unit, _ = await owned_poll(client)
    stranger = await sign_in(client, Account.create())
    for path in (f"/api/interactions/{unit.id}/results", f"/api/interactions/{unit.id}/results.csv"):
        anonymous = await client.get(path)
        assert (anonymous.status_code, (await anonymous.get_json())["error"]) == (401, "auth_required")
        forged = await client.get(path, headers=bearer("0" * 64))
        assert forged.status_code == 401
        other = await client.get(path, headers=bearer(stranger))
        assert (other.status_code, (await other.get_json())["error"]) == (403, "not_owner")
    missing = await client.get("/api/interactions/task_doesnotexist1234567/results", headers=bearer(stranger))
    assert missing.status_code == 404


async def test_results_end_with_the_session(client):
    unit, token = await owned_poll(client)
    assert (await client.get(f"/api/interactions/{unit.id}/results", headers=bearer(token))).status_code == 200
    assert (await client.post("/api/auth/logout", json={}, headers=bearer(token))).status_code == 200
    assert (await client.get(f"/api/interactions/{unit.id}/results", headers=bearer(token))).status_code == 401
