"""What chain tests do over and over: issue a funded claim, redeem it (alone or in a batch), deposit, move the
chain's time, and name the custom error of a revert."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from eth_account.signers.local import LocalAccount
from tortoise.transactions import in_transaction
from web3.exceptions import ContractLogicError
from web3.types import TxReceipt

from adnet.chain.client import ChainClient
from adnet.chain.contracts import error_name
from adnet.chain.transact import send_transaction
from adnet.chain.watcher import Watcher
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.money import ledger, vault_events
from adnet.money.claims import claim_ref_for, issue_claim
from adnet.money.models import Claim, ClaimPurpose
from tests.factories import fund

G = 10**18


def watcher(chain: ChainClient, clock) -> Watcher:
    """A watcher of ``chain`` that books vault events as the app's does, at the test clock's time."""
    return Watcher(chain, apply=lambda event: vault_events.apply(event, clock.now()))


def user(index: int) -> LocalAccount:
    """A funded development account (1 to 4 hold tokens on every test chain; 0 deploys)."""
    return dev_accounts()[index]


async def funded_claim(chain: ChainClient, clock, *, recipient: str, amount: int = G, symbol: str = "G$",
                       pool: ledger.AccountKey | None = None) -> Claim:
    """A claim of ``amount`` paid from a freshly funded task pool, issued in its own transaction."""
    pool = pool or ledger.AccountKey("task", new_id("task"), symbol)
    await fund(pool, amount, now=clock.now())
    async with in_transaction():
        return await issue_claim(purpose=ClaimPurpose.COMPLETION, recipient=recipient, token_symbol=symbol,
                                 amount=amount, claim_ref=claim_ref_for("completion", new_id("tc")),
                                 sources=[(pool, amount)], now=clock.now(), chain=chain)


async def redeem(chain: ChainClient, claim: Claim, sender: LocalAccount) -> TxReceipt:
    """Send the claim's vault call from ``sender``, built as the portal builds it."""
    return await send_transaction(chain.w3, sender, chain.build_claim_tx(sender.address, claim))


async def redeem_batch(chain: ChainClient, claims: list[Claim], sender: LocalAccount) -> TxReceipt:
    """Send the vault's ``claimBatch`` of ``claims`` from ``sender``, built as the rewards page builds it."""
    return await send_transaction(chain.w3, sender, chain.build_claim_batch_tx(sender.address, claims))


async def deposit(chain: ChainClient, account: LocalAccount, amount: int, account_ref: str,
                  symbol: str = "G$") -> TxReceipt:
    """Approve and deposit, as a wallet does with the portal's two transactions; returns the deposit's receipt."""
    await send_transaction(chain.w3, account, chain.build_approve_tx(account.address, symbol, amount))
    return await send_transaction(chain.w3, account, chain.build_deposit_tx(account.address, symbol, amount,
                                                                            account_ref))


async def advance_chain_time(chain: ChainClient, seconds: int) -> None:
    """Move the chain's clock forward and mine a block carrying the new time (same calls on both chains)."""
    await chain.w3.provider.make_request("evm_increaseTime", [seconds])
    await chain.w3.provider.make_request("evm_mine", [])


async def mine(chain: ChainClient, blocks: int = 1) -> None:
    for _ in range(blocks):
        await chain.w3.provider.make_request("evm_mine", [])


async def revert_reason(call: Awaitable[Any]) -> str:
    """The name of the custom error ``call`` reverts with; fails the test when it does not revert."""
    try:
        await call
    except ContractLogicError as exc:
        data = exc.data if isinstance(exc.data, str) else None
        return error_name(data) or f"unknown revert {exc}"
    raise AssertionError("the call did not revert")


# A fixed claim on the development chain (its chain id, and the vault and G$ that development account 0 deploys
# first) and its EIP-712 digest, computed once from the vault's claimDigest.
DIGEST_VECTOR = {
    "chain_id": 131277322940537,
    "vault": "0x9fe46736679d2d9a65f0992f2272de9f3c7fa6e0",
    "recipient": "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "token": "0x5fbdb2315678afecb367f032d93f642f64180aa3",
    "amount": 12 * G + G // 2,
    "claim_ref": "0xd9a68b32a752903b444e2fb0dbd47fc7a2c68eed1cfbf85e8d41bed846e31d77",
    "nonce": 7,
    "deadline": 1_767_225_600,
}
VECTOR_DIGEST = "0x2aaafd389c438bd6c230ae4ba22ba71d36177b51bdcad6b9b2642062b40960e3"
