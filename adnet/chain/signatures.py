"""Signatures of contract wallets (EIP-1271): a Safe or a smart account signs by answering ``isValidSignature``.

Sign-in and SIGN_MESSAGE tasks first try to recover an ordinary account's address from a signature; when that
fails, the address may be a contract that accepts the signature, which only the chain can tell.
"""

from __future__ import annotations

import aiohttp
from eth_utils import to_checksum_address
from web3.exceptions import BadFunctionCallOutput, ContractLogicError, Web3Exception

from adnet.chain.client import ChainClient, ChainUnavailable

EIP1271_MAGIC_VALUE = bytes.fromhex("1626ba7e")
_EIP1271_ABI = [{
    "inputs": [{"name": "hash", "type": "bytes32"}, {"name": "signature", "type": "bytes"}],
    "name": "isValidSignature",
    "outputs": [{"name": "", "type": "bytes4"}],
    "stateMutability": "view",
    "type": "function",
}]


async def contract_signed(chain: ChainClient, wallet: str, signable_hash: bytes, signature: str) -> bool:
    """Whether the contract at ``wallet`` accepts ``signature`` over ``signable_hash`` (EIP-1271). False for an
    address without code, a contract that refuses, or a signature that is not hex; ChainUnavailable when the chain
    cannot be asked."""
    address = to_checksum_address(wallet)
    try:
        signature_bytes = bytes.fromhex(signature.removeprefix("0x"))
    except ValueError:
        return False
    try:
        if not await chain.w3.eth.get_code(address):
            return False
        contract = chain.w3.eth.contract(address=address, abi=_EIP1271_ABI)
        answer = await contract.functions.isValidSignature(signable_hash, signature_bytes).call()
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ChainUnavailable(f"the chain's node does not answer: {type(exc).__name__}") from exc
    except (BadFunctionCallOutput, ContractLogicError, Web3Exception, ValueError):
        return False
    return bytes(answer) == EIP1271_MAGIC_VALUE
