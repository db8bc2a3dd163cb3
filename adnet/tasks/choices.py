"""The on-chain actions adnet offers an advertiser for an ONCHAIN_EVENT task: the contracts of its own deployment
and the events they emit, named for a person. The portal lists them instead of asking for an address and a topic;
each fills the task's config (``contract``, ``eventTopic``, ``emitter``) as the API takes it. The API still takes
any contract and event."""

from __future__ import annotations

from dataclasses import dataclass

from eth_abi import encode
from eth_hash.auto import keccak

from adnet.chain.deploy import Deployment


def event_topic(signature: str) -> str:
    """The topic of an event: keccak256 of its signature (``Transfer(address,address,uint256)``), 0x-hex."""
    return "0x" + keccak(signature.encode()).hex()


def transfer_call(recipient: str, amount: int) -> dict[str, str]:
    """The ``call`` of an ONCHAIN_EVENT config that sends ``amount`` (smallest unit) of an ERC-20 token to
    ``recipient``: ``transfer(address,uint256)``, ABI-encoded, no value."""
    selector = keccak(b"transfer(address,uint256)")[:4]
    return {"data": "0x" + (selector + encode(["address", "uint256"], [recipient, amount])).hex(), "value": "0"}


@dataclass(frozen=True)
class OnchainChoice:
    """One action: ``key`` names it in a form, ``label`` says it to a person."""

    key: str
    label: str
    contract: str
    event: str

    @property
    def config(self) -> dict[str, str]:
        """The part of an ONCHAIN_EVENT config it fills: a transaction to ``contract`` that emitted ``event``
        from the contract itself."""
        return {"contract": self.contract, "eventTopic": event_topic(self.event), "emitter": self.contract}


TRANSFER = "Transfer(address,address,uint256)"
APPROVAL = "Approval(address,address,uint256)"
DEPOSITED = "Deposited(address,address,uint256,bytes32)"


def onchain_choices(deployment: Deployment) -> list[OnchainChoice]:
    """The actions of ``deployment``'s contracts a viewer's wallet can take."""
    return [
        OnchainChoice("gs-transfer", "Send G$ (a Transfer of the G$ token)", deployment.gs_token, TRANSFER),
        OnchainChoice("gs-approval", "Approve a G$ allowance (an Approval of the G$ token)", deployment.gs_token,
                      APPROVAL),
        OnchainChoice("sov-transfer", "Send SOV (a Transfer of the SOV token)", deployment.sov_token, TRANSFER),
        OnchainChoice("vault-deposit", "Deposit into the adnet vault (its Deposited event)", deployment.vault,
                      DEPOSITED),
    ]
