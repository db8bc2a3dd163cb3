"""The compiled contracts, read from the committed artifacts in ``contracts/build`` (running adnet needs no
compiler), and the names of their custom errors for readable reverts."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Any

from eth_utils import function_signature_to_4byte_selector

from adnet.core.files import shipped

BUILD_DIR = shipped("contracts", "build")


@dataclass(frozen=True)
class Artifact:
    """One contract's ABI and creation bytecode."""

    name: str
    abi: list[dict[str, Any]]
    bytecode: str


@cache
def artifact(name: str) -> Artifact:
    """The committed artifact ``contracts/build/<name>.json``."""
    path = BUILD_DIR / f"{name}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise RuntimeError(f"missing contract artifact {path}; run `make contracts`") from None
    bytecode = data["bytecode"] if data["bytecode"].startswith("0x") else "0x" + data["bytecode"]
    return Artifact(name=data["contractName"], abi=data["abi"], bytecode=bytecode)


def vault_artifact() -> Artifact:
    return artifact("AdVault")


def token_artifact() -> Artifact:
    """The mintable ERC-20 deployed as G$ and SOV on development chains (its ERC-20 ABI serves real tokens too)."""
    return artifact("TestToken")


@cache
def _error_names() -> dict[str, str]:
    names: dict[str, str] = {}
    for contract in (vault_artifact(), token_artifact()):
        for entry in contract.abi:
            if entry["type"] == "error":
                signature = f"{entry['name']}({','.join(item['type'] for item in entry['inputs'])})"
                names["0x" + function_signature_to_4byte_selector(signature).hex()] = entry["name"]
    return names


def error_name(revert_data: str | None) -> str | None:
    """The custom error a revert carries (``"ClaimExpired"``), or None when the data names none of ours."""
    if not revert_data or len(revert_data) < 10:
        return None
    return _error_names().get(revert_data[:10].lower())
