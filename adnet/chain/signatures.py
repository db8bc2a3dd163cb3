"""Whether a wallet signed a message: an ordinary account's EIP-191 signature, or a contract wallet's (EIP-1271: a
Safe or a smart account signs by answering ``isValidSignature``).

Sign-in and SIGN_MESSAGE tasks both ask ``wallet_signed``. It first recovers an ordinary account's address from the
signature; when that fails, or names another address, the wallet may be a contract that accepts the signature,
which only the chain can tell. A contract wallet's signature need not be an ECDSA signature at all, so one that
ecrecover cannot read (r or s zero, s not below the curve order, a bad v) still goes to the contract.
"""

from __future__ import annotations

import binascii

import aiohttp
from eth_account import Account
from eth_account.messages import defunct_hash_message, encode_defunct
from eth_keys.exceptions import BadSignature
from eth_utils import to_checksum_address
from eth_utils.exceptions import ValidationError
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


async def wallet_signed(chain: ChainClient, wallet: str, message: str, signature: str) -> bool:
    """Whether ``wallet`` signed ``message`` with EIP-191 (``personal_sign``), as an ordinary account or as a
    contract wallet (EIP-1271). ChainUnavailable when only the chain could tell and it cannot be asked."""
    if recovered_address(message, signature) == wallet.lower():
        return True
    return await contract_signed(chain, wallet, defunct_hash_message(text=message), signature)


def recovered_address(message: str, signature: str) -> str | None:
    """The lower-case address whose EIP-191 signature of ``message`` this is; None for a signature that is not
    hex, not 65 bytes, or that ecrecover cannot read."""
    try:
        return Account.recover_message(encode_defunct(text=message), signature=signature).lower()
    except (BadSignature, ValidationError, binascii.Error, ValueError, TypeError):
        return None


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
