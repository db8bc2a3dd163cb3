"""Whether a wallet signed a message: an ordinary account's EIP-191 signature, or a contract wallet's (EIP-1271: a
Safe or a smart account signs by answering ``isValidSignature``).

Every route that takes a signature (sign-in, the rewards sign-in, the portal's sign-in, SIGN_MESSAGE tasks) asks one
function, ``check_wallet_signature``, with whatever the request holds where the signature goes. It returns only when
the wallet signed the message, and otherwise raises ``InvalidSignature`` (401 ``invalid_signature``), whatever the
input: not a string, not ``0x`` and hex digits, empty, longer than ``MAX_SIGNATURE_BYTES``, or a signature of any
length, ``v``, ``r`` and ``s`` that does not recover the wallet's address. No input reaches a library in a shape it
may raise on: the signature is decoded here, and only 65 bytes with ``v`` 27 or 28 (or 0 or 1), ``r`` and ``s``
inside the curve's order and ``s`` in its lower half (as OpenZeppelin's ECDSA takes them: the high-``s`` twin of a
signature is another encoding of it) go to ecrecover, whose refusal of an ``r`` that is no point's is the one it
raises.

A signature that does not recover the wallet may still be the wallet's when the wallet is a contract that accepts
it, which only the chain can tell. A contract wallet's signature need not be an ECDSA signature at all, so any bytes
(of a length ecrecover cannot read, ``r`` or ``s`` zero, a high ``s``, another ``v``) still go to the contract; an
address without code refuses them. ``ChainUnavailable`` when the chain cannot be asked.
"""

from __future__ import annotations

import re

import aiohttp
from eth_account.messages import defunct_hash_message
from eth_keys import keys
from eth_keys.exceptions import BadSignature
from eth_utils import to_checksum_address
from web3.exceptions import BadFunctionCallOutput, ContractLogicError, Web3Exception

from adnet.chain.client import ChainClient, ChainUnavailable
from adnet.core.errors import Unauthorized

# The longest signature taken (a contract wallet's may hold several owners' signatures).
MAX_SIGNATURE_BYTES = 4096
# secp256k1's order: an ECDSA signature's r and s are below it, and s at most half of it.
CURVE_ORDER = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141
_HEX_BYTES = re.compile(r"0x(?:[0-9a-fA-F]{2})+")
EIP1271_MAGIC_VALUE = bytes.fromhex("1626ba7e")
_EIP1271_ABI = [{
    "inputs": [{"name": "hash", "type": "bytes32"}, {"name": "signature", "type": "bytes"}],
    "name": "isValidSignature",
    "outputs": [{"name": "", "type": "bytes4"}],
    "stateMutability": "view",
    "type": "function",
}]


class InvalidSignature(Unauthorized):
    """The input in ``field`` is not the wallet's signature of the message: 401 ``invalid_signature``."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__("invalid_signature", message, field=field)


async def check_wallet_signature(chain: ChainClient, wallet: str, message: str, signature: object, *,
                                 field: str = "signature") -> None:
    """Return when ``wallet`` signed ``message`` with EIP-191 (``personal_sign``), as an ordinary account or as a
    contract wallet (EIP-1271); InvalidSignature naming ``field`` for anything else ``signature`` holds;
    ChainUnavailable when only the chain could tell and it cannot be asked."""
    raw = signature_bytes(signature, field=field)
    try:
        digest = defunct_hash_message(text=message)
    except UnicodeEncodeError:  # a lone surrogate: no text a wallet signs
        raise InvalidSignature("No wallet signs this message.", field=field) from None
    if recover_signer(digest, raw) == wallet.lower() or await contract_signed(chain, wallet, digest, raw):
        return
    raise InvalidSignature("The signature is not the wallet's signature of the message.", field=field)


def signature_bytes(signature: object, *, field: str = "signature") -> bytes:
    """The bytes of a ``0x``-hex signature of 1 to ``MAX_SIGNATURE_BYTES`` bytes; InvalidSignature for anything
    else."""
    if not (isinstance(signature, str) and len(signature) <= 2 + 2 * MAX_SIGNATURE_BYTES
            and _HEX_BYTES.fullmatch(signature)):
        raise InvalidSignature(f"{field} is the 0x-hex signature of the message.", field=field)
    return bytes.fromhex(signature[2:])


def recover_signer(digest: bytes, signature: bytes) -> str | None:
    """The lower-case address whose ECDSA signature of the 32-byte ``digest`` ``signature`` is (``r ‖ s ‖ v``);
    None for bytes that are not one: another length, another ``v``, ``r`` or ``s`` out of range, a high ``s``, or
    an ``r`` that is no point's."""
    if len(signature) != 65:
        return None
    r, s, v = int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:64], "big"), signature[64]
    v = v - 27 if v in (27, 28) else v
    if v not in (0, 1) or not 0 < r < CURVE_ORDER or not 0 < s <= CURVE_ORDER // 2:
        return None
    try:
        return keys.Signature(vrs=(v, r, s)).recover_public_key_from_msg_hash(digest).to_address().lower()
    except BadSignature:
        return None


async def contract_signed(chain: ChainClient, wallet: str, signable_hash: bytes, signature: bytes) -> bool:
    """Whether the contract at ``wallet`` accepts ``signature`` over ``signable_hash`` (EIP-1271). False for an
    address without code or a contract that refuses; ChainUnavailable when the chain cannot be asked."""
    address = to_checksum_address(wallet)
    try:
        if not await chain.w3.eth.get_code(address):
            return False
        contract = chain.w3.eth.contract(address=address, abi=_EIP1271_ABI)
        answer = await contract.functions.isValidSignature(signable_hash, signature).call()
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise ChainUnavailable(f"the chain's node does not answer: {type(exc).__name__}") from exc
    except (BadFunctionCallOutput, ContractLogicError, Web3Exception, ValueError):
        return False
    return bytes(answer) == EIP1271_MAGIC_VALUE
