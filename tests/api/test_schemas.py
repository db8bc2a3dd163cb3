"""Response schemas: every answer is written by a schema, so the OpenAPI document describes every response,
error responses and security included; and a claim is written as the object a wallet redeems."""

from __future__ import annotations

import json
import re

from eth_utils import to_checksum_address

from adnet.tasks.choices import transfer_call
from adnet.tasks.config import config_json, task_view
from adnet.tasks.models import TaskKind
from api.schemas import ClaimOut, public_task
from tests.chain.helpers import G, funded_claim, user
from tests.factories import make_task

METHODS = ("get", "post", "put", "patch", "delete")
BASE = "https://adnet.example"
QUIZ = {"question": "Which chain is G$ on?", "answers": ["Celo", "celo mainnet"], "choices": ["Celo", "Base"]}


async def operations(client) -> dict[str, dict]:
    document = await (await client.get("/openapi.json")).get_json()
    return {f"{method.upper()} {path}": operation for path, item in document["paths"].items()
            for method, operation in item.items() if method in METHODS}


PATH_ARGUMENT, OPENAPI_ARGUMENT = re.compile(r"<(?:[^:<>]*:)?([^<>]+)>"), r"{\1}"
# What the app serves that the OpenAPI document leaves out, each with where it is described instead.
NOT_IN_THE_DOCUMENT = {
    "/": "the front page", "/docs": "the API reference page itself", "/openapi.json": "the document itself",
    "/demo": "a publisher's page for people (docs/serving.md)", "/static/<path:filename>": "static files",
    "/sdk/<version>/sdk.js": "the embed script (docs/serving.md)",
    "/dev/rpc": "the development chain's JSON-RPC relay, absent in production (README)",
    "/rewards": "a viewer's rewards page for people (docs/rewards.md)",
}


async def test_every_route_of_the_app_is_in_the_document_with_its_answers(app, client):
    """Every route of the JSON API and of operations; the portal's pages, for people, are HTML forms that answer
    with HTML (docs/publishers.md, docs/advertisers.md)."""
    found = await operations(client)
    routes = {(method, rule.rule) for rule in app.url_map.iter_rules()
              for method in rule.methods - {"HEAD", "OPTIONS"}
              if rule.rule not in NOT_IN_THE_DOCUMENT and not rule.rule.startswith("/portal")}
    assert len(routes) > 50
    for method, rule in routes:
        label = f"{method} {PATH_ARGUMENT.sub(OPENAPI_ARGUMENT, rule)}"
        assert label in found, label
        assert found[label].get("summary"), label
        answers = found[label]["responses"]
        assert any(status < "400" for status in answers), label
        assert all(answer["description"] for answer in answers.values()), label
    assert len(found) == len(routes)  # and nothing else


async def test_every_operation_documents_its_answers_and_its_errors(client):
    found = await operations(client)
    assert len(found) > 40
    for label, operation in found.items():
        statuses = set(operation["responses"])
        assert statuses & {"200", "201", "202", "302"}, label
        assert "429" in statuses, label  # every route has a rate limit
        own_503 = label in {"GET /healthz", "GET /readyz"}  # their 503 is their own answer, not an error
        for status in {status for status in statuses if status >= "400"} - {"503" if own_503 else ""}:
            schema = operation["responses"][status]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (label, status)
    csv = found["GET /api/advertisers/campaigns/{campaign_id}/report.csv"]["responses"]["200"]
    assert set(csv["content"]) == {"text/csv"} and "Content-Disposition" in csv["headers"]
    assert "Location" in found["GET /api/tasks/{task_id}/visit"]["responses"]["302"]["headers"]
    assert "Retry-After" in found["POST /api/publishers/withdraw"]["responses"]["503"]["headers"]


async def test_query_parameters_are_named_as_the_api_reads_them(client):
    found = await operations(client)
    queries = {(label, parameter["name"]) for label, operation in found.items()
               for parameter in operation.get("parameters", ()) if parameter["in"] == "query"}
    assert ("GET /api/advertisers/campaigns/{campaign_id}/report", "from") in queries
    assert [query for query in queries if not re.fullmatch(r"[a-z][a-zA-Z]*", query[1])] == []


async def test_every_path_names_each_of_its_arguments(client):
    documented = (await (await client.get("/openapi.json")).get_json())["paths"]
    assert "/api/advertisers/campaigns/{campaign_id}/{action}" in documented
    for path, item in documented.items():
        named = {parameter["name"] for operation in item.values() for parameter in operation.get("parameters", ())
                 if parameter["in"] == "path"}
        assert named == set(re.findall(r"{([^}]+)}", path)), path


async def test_every_json_write_requires_its_body_and_documents_413_and_415(client):
    found = await operations(client)
    writes = {label: operation for label, operation in found.items()
              if label.split()[0] in ("POST", "PUT", "PATCH") and label.split()[1].startswith("/api/")}
    assert len(writes) > 20
    for label, operation in writes.items():
        assert operation["requestBody"]["required"] is True, label
        assert "application/json" in operation["requestBody"]["content"], label
        assert {"413", "415"} <= set(operation["responses"]), label
    # A route that reads nothing still takes JSON, as every POST under /api/ must (what keeps other sites' forms out).
    assert found["POST /api/auth/logout"]["requestBody"]["required"] is True


async def test_signed_in_operations_name_their_security(client):
    found = await operations(client)
    signed_in = {label for label in found if label.split(" ")[1].startswith(
        ("/api/advertisers", "/api/operators", "/api/publishers", "/api/auth/me", "/api/auth/logout"))}
    assert len(signed_in) > 30
    for label in signed_in:
        assert found[label]["security"][:2] == [{"session": []}, {"sessionCookie": []}], label
        assert "401" in found[label]["responses"], label
        # The publisher and advertiser routes also take an API key, naming the scope it needs; others (members of an
        # account among them) never do.
        by_key = found[label]["security"][2:]
        path = label.split(" ")[1]
        if path.startswith(("/api/advertisers", "/api/publishers")) and not path.startswith(
                ("/api/publishers/accounts", "/api/advertisers/accounts")):
            assert len(by_key) == 1 and len(by_key[0]["apiKey"]) == 1, label
        else:
            assert by_key == [], label
    for label in ("GET /api/serve", "POST /api/track", "POST /api/tasks/complete", "POST /api/interactions"):
        assert "security" not in found[label], label
    document = await (await client.get("/openapi.json")).get_json()
    assert set(document["components"]["securitySchemes"]) == {"session", "sessionCookie", "metricsToken", "apiKey"}
    assert found["GET /metrics"]["security"] == [{"metricsToken": []}]
    assert all(scheme["description"] for scheme in document["components"]["securitySchemes"].values())


async def test_responses_are_described_in_the_names_and_types_clients_get(client):
    found = await operations(client)
    document = await (await client.get("/openapi.json")).get_json()
    schemas = document["components"]["schemas"]
    report = found["GET /api/advertisers/campaigns/{campaign_id}/report"]
    assert {parameter["name"] for parameter in report["parameters"]} == {"campaign_id", "from", "to", "granularity"}
    written = report["responses"]["200"]["content"]["application/json"]["schema"]
    assert set(written["properties"]) >= {"campaignId", "from", "to", "days", "refusals"}
    assert schemas["CampaignOut"]["properties"]["budget"]["type"] == "string"  # amounts are decimal strings
    assert schemas["ClaimOut"]["properties"]["chainId"]["type"] == "integer"
    serve = found["GET /api/serve"]["responses"]["200"]["content"]["application/json"]["schema"]
    assert serve["title"] == "ServeOut"
    assert {option["$ref"].rsplit("/", 1)[1] for option in serve["oneOf"]} == {"BannerOut", "UnitOut", "HouseOut",
                                                                        "NothingOut"}
    assert set(schemas["BannerOut"]["properties"]) == {"kind", "ad", "bannerClickActive", "attachedTasks"}


async def test_a_claim_carries_what_a_wallet_needs(chain, clock):
    claim = await funded_claim(chain, clock, recipient=user(1).address, amount=G + 1)
    written = ClaimOut.of(claim).model_dump()
    assert written == {
        "claimRef": claim.claim_ref, "signature": claim.signature, "nonce": str(claim.nonce),
        "deadline": str(claim.deadline), "to": chain.vault.address, "chainId": chain.chain_id,
        "recipient": user(1).address, "token": chain.vault.w3.to_checksum_address(chain.gs_address),
        "amount": str(G + 1),
    }
    assert written["signature"].startswith("0x") and len(written["signature"]) == 132


async def test_quiz_answers_never_appear_in_the_public_view(app):
    task = await make_task(kind=TaskKind.QUIZ, config=config_json(TaskKind.QUIZ, QUIZ))
    view = public_task(task_view(task), BASE).model_dump()
    text = json.dumps(view)
    assert view["question"] == QUIZ["question"] and view["choices"] == ["Celo", "Base"]
    assert "answers" not in view and "celo mainnet" not in text


async def test_public_views_of_every_kind(app):
    visit = await make_task(kind=TaskKind.VISIT_URL, config=config_json(TaskKind.VISIT_URL,
                                                                        {"url": "https://a.example"}))
    view = public_task(task_view(visit), BASE).model_dump()
    assert view["visitUrl"] == f"{BASE}/api/tasks/{visit.id}/visit"
    assert view["rewards"] == {"points": 10, "gs": "1"}
    sign = await make_task(kind=TaskKind.SIGN_MESSAGE,
                           config=config_json(TaskKind.SIGN_MESSAGE, {"message": "I {wallet} {nonce}"}))
    signing = public_task(task_view(sign), BASE).model_dump()
    assert "message" not in signing and signing["messageUrl"] == f"{BASE}/api/tasks/{sign.id}/message"
    survey = await make_task(kind=TaskKind.SURVEY, config=config_json(TaskKind.SURVEY, {"questions": [
        {"id": "q1", "type": "rating", "prompt": "Rate us"},
        {"id": "q2", "type": "text", "prompt": "Why?", "required": False},
    ]}))
    assert public_task(task_view(survey), BASE).model_dump()["totalSteps"] == 2


async def test_an_onchain_tasks_prepared_transaction_is_public_with_the_chain(app):
    config = {"contract": "0x" + "cd" * 20, "eventTopic": "0x" + "ef" * 32,
              "call": transfer_call("0x" + "ab" * 20, 10**16)}
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, config=config_json(TaskKind.ONCHAIN_EVENT, config))
    served = public_task(task_view(task), BASE, 42).model_dump()
    assert served["transaction"] == {"to": to_checksum_address("0x" + "cd" * 20), "data": config["call"]["data"],
                                     "value": "0", "chainId": 42}
    assert public_task(task_view(task), BASE).model_dump()["transaction"]["chainId"] is None  # a preview
    plain = {key: value for key, value in config.items() if key != "call"}
    task = await make_task(kind=TaskKind.ONCHAIN_EVENT, config=config_json(TaskKind.ONCHAIN_EVENT, plain))
    assert public_task(task_view(task), BASE, 42).model_dump()["transaction"] is None
