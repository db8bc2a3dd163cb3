"""Wallet audiences end to end on the embedded chain and on anvil: wallets that hold or do not hold a token, own or
do not own a collectible, hold or do not hold enough of an ERC-1155 id, and did or did not use a contract are served
a targeted campaign exactly as its rules say, and only once they proved the wallet (the rewards sign-in); a wallet
string a page passes changes nothing; switching wallet targeting off stops it at once; serving asks neither the
database nor the chain. On anvil the chain has Multicall3 (its code put at the canonical address), so the job
reads balances through ``aggregate3``; the embedded chain has none, so it sends batched JSON-RPC requests."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from eth_account.signers.local import LocalAccount
from web3 import AsyncWeb3

from adnet.audiences.evaluation import AudienceJob, PassReport
from adnet.audiences.models import AudienceWallet
from adnet.campaigns.targeting import Targeting
from adnet.chain import reads
from adnet.chain.client import ChainClient
from adnet.chain.contracts import artifact
from adnet.chain.deploy import DEV_ACCOUNT_FUNDING, mint
from adnet.chain.reads import MULTICALL3
from adnet.chain.transact import send_transaction
from adnet.core import changes
from adnet.demo import TRANSFER_TOPIC
from tests.api.test_serve import app_context  # noqa: F401 - autouse: the app as the current app
from tests.auth_helpers import bearer, rewards_session
from tests.chain.conftest import ON_BOTH_CHAINS
from tests.chain.helpers import user
from tests.chain.test_task_onchain import transfer_from
from tests.conftest import rebuild_index
from tests.factories import make_campaign, make_creative, make_site
from tests.sql import recorded_statements

pytestmark = ON_BOTH_CHAINS
DRAWS = 40
ITEM_ID = 7


async def deployed(chain: ChainClient, name: str, *args: object) -> str:
    """The address of a freshly deployed ``contracts/build/<name>`` (development account 0 deploys and owns)."""
    contract = artifact(name)
    factory = chain.w3.eth.contract(abi=contract.abi, bytecode=contract.bytecode)
    receipt = await send_transaction(chain.w3, user(0), {"data": factory.constructor(*args).data_in_transaction})
    return str(receipt["contractAddress"]).lower()


async def call(chain: ChainClient, name: str, address: str, function: str, *args: object) -> None:
    """Send ``function(args)`` to the contract from its owner, development account 0."""
    contract = chain.w3.eth.contract(address=AsyncWeb3.to_checksum_address(address), abi=artifact(name).abi)
    await send_transaction(chain.w3, user(0), {"to": address, "data": contract.encode_abi(function, args=list(args))})


async def with_multicall(chain: ChainClient) -> None:
    """Put Multicall3's code at its canonical address on anvil (as most chains have it)."""
    address = await deployed(chain, "Multicall3")
    code = await chain.w3.eth.get_code(AsyncWeb3.to_checksum_address(address))
    await chain.w3.provider.make_request("anvil_setCode", [MULTICALL3, code.to_0x_hex()])


async def targeted(name: str, **rules) -> str:
    """An approved, funded campaign with one creative, targeted by ``rules`` (validated as the API does)."""
    campaign = await make_campaign(name=name, targeting=Targeting.model_validate(rules).stored())
    await make_creative(campaign)
    return campaign.id


async def served(client, site_id: str, **params) -> set[str]:
    """The campaigns ``DRAWS`` serves picked for one viewer (``NONE`` for an empty slot)."""
    seen = set()
    for _ in range(DRAWS):
        response = await client.get("/api/serve", query_string={"siteId": site_id, "house": "0", **params})
        assert response.status_code == 200
        body = await response.get_json()
        seen.add(body["ad"]["campaignId"] if body["kind"] == "BANNER" else "NONE")
    return seen


@contextlib.contextmanager
def no_chain_calls(chain: ChainClient) -> Iterator[list[str]]:
    """Every call the block makes to the chain (web3's provider or a relayed request), recorded."""
    made: list[str] = []
    provider = chain.w3.provider
    original_request, original_relay = provider.make_request, chain.relay

    async def request(method, params):
        made.append(str(method))
        return await original_request(method, params)

    async def relay(payload):
        made.append("relay")
        return await original_relay(payload)

    provider.make_request, chain.relay = request, relay  # type: ignore[method-assign]
    try:
        yield made
    finally:
        provider.make_request, chain.relay = original_request, original_relay  # type: ignore[method-assign]


async def evaluated(app, job: AudienceJob) -> PassReport:
    """One pass of the job, its announcements heard by the app's serving index as the scheduler's are, which then
    brings itself up to date."""
    services = app.extensions["adnet"]
    with changes.listening(services.announce):
        report = await job.run_once()
    await services.serving.update()
    return report


async def proven(client, account: LocalAccount) -> dict:
    """``account`` signs in for rewards: the answer with its audience pass."""
    return await rewards_session(client, account)


async def test_wallets_are_served_exactly_as_their_audience_rules_say_once_proven(app, client, app_chain, clock,
                                                                                 chain_kind):
    chain = app_chain
    if chain_kind == "anvil":
        await with_multicall(chain)
    collection = await deployed(chain, "TestCollectible", user(0).address)
    items = await deployed(chain, "TestItems", user(0).address)
    holder, owner, item_holder, user_of_contract = user(1), user(2), user(3), user(4)
    await mint(chain.w3, user(0), chain.gs_address, holder.address, 1)  # one more than every account was given
    await call(chain, "TestCollectible", collection, "mint", owner.address, 1)
    await call(chain, "TestItems", items, "mint", item_holder.address, ITEM_ID, 2)
    await call(chain, "TestItems", items, "mint", holder.address, ITEM_ID, 1)  # fewer than the rule asks
    await transfer_from(chain, 4)  # account 4 sends G$: a Transfer naming it in topic1

    site = await make_site()
    rich = await targeted("rich", audienceGroups=[[{"kind": "erc20", "contract": chain.gs_address,
                                                    "minAmount": str(DEV_ACCOUNT_FUNDING + 1)}]])
    collector = await targeted("collector", audienceGroups=[[{"kind": "erc721", "contract": collection}]])
    items_two = await targeted("items", audienceGroups=[[{"kind": "erc1155", "contract": items,
                                                          "tokenId": str(ITEM_ID), "minAmount": "2"}]])
    active = await targeted("active", audienceGroups=[[{"kind": "event", "contract": chain.gs_address,
                                                        "topic0": TRANSFER_TOPIC, "walletField": "topic1",
                                                        "days": 7}]])
    sender = await targeted("sender", audienceGroups=[[{"kind": "txCount", "min": 1}]])
    not_collector = await targeted("not a collector", audienceExclude=[{"kind": "erc721", "contract": collection}])
    everyone = await targeted("everyone")
    await rebuild_index(app)

    # Before any proof: only the campaign without wallet rules, whatever wallet the page names.
    assert await served(client, site.id) == {everyone}
    assert await served(client, site.id, wallet=holder.address) == {everyone}

    passes = {account.address: (await proven(client, account))["audiencePass"]
              for account in (holder, owner, item_holder, user_of_contract)}
    # Proven, not evaluated yet: not known is no match (and the exclusion refuses).
    assert await served(client, site.id, audience=passes[holder.address]) == {everyone}

    job = AudienceJob(chain, clock=clock)
    report = await evaluated(app, job)
    assert report.evaluated == 4
    assert job._multicall is (chain_kind == "anvil")

    with recorded_statements() as queries, no_chain_calls(chain) as chain_calls:
        seen = {address: await served(client, site.id, audience=audience_pass)
                for address, audience_pass in passes.items()}
        unproven = await served(client, site.id, wallet=owner.address)
        real = passes[owner.address]
        forged = await served(client, site.id, audience=real[:-1] + ("1" if real.endswith("0") else "0"))
    assert queries == [] and chain_calls == []
    assert seen[holder.address] == {rich, not_collector, everyone}
    assert seen[owner.address] == {collector, everyone}
    assert seen[item_holder.address] == {items_two, not_collector, everyone}
    assert seen[user_of_contract.address] == {active, sender, not_collector, everyone}
    assert unproven == forged == {everyone}

    # The viewer sees its audiences and switches wallet targeting off: honoured at once, and kept.
    session = await proven(client, owner)
    mine = await (await client.get("/api/audiences", headers=bearer(session["token"]))).get_json()
    assert mine["targetingEnabled"] is True and len(mine["audiences"]) == 1 and collection in mine["audiences"][0]
    switched = await client.post("/api/audiences/targeting", json={"enabled": False},
                                 headers=bearer(session["token"]))
    assert switched.status_code == 200 and (await switched.get_json())["audiences"] == []
    assert await served(client, site.id, audience=session["audiencePass"]) == {everyone}
    assert (await evaluated(app, job)).evaluated == 0
    assert await served(client, site.id, audience=session["audiencePass"]) == {everyone}
    row = await AudienceWallet.get(wallet=owner.address.lower())
    assert row.opted_out and row.matched == [] and row.evaluated == []


async def test_logs_naming_wallets_are_read_in_ranges_a_node_accepts(app_chain, monkeypatch):
    chain = app_chain
    await transfer_from(chain, 2)
    await transfer_from(chain, 3)
    await transfer_from(chain, 2)
    head = await chain.block_number()
    wallets = [user(2).address.lower(), user(1).address.lower()]
    whole = await reads.logs_naming(chain, chain.gs_address, TRANSFER_TOPIC, 1, wallets, 0, head)
    monkeypatch.setattr(reads, "MAX_BLOCK_RANGE", 1)  # one block per eth_getLogs: as many requests as blocks
    parts = await reads.logs_naming(chain, chain.gs_address, TRANSFER_TOPIC, 1, wallets, 0, head)
    assert [(entry.tx_hash, entry.log_index) for entry in parts] == [(entry.tx_hash, entry.log_index)
                                                                      for entry in whole]
    assert len(whole) == 2 and {entry.topics[1][-20:].hex() for entry in whole} == {user(2).address.lower()[2:]}
