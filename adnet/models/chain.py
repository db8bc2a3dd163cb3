"""adnet's view of the chain: the chain and vault it is bound to, the watcher's cursor, and deposits seen."""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.models.fields import token_amount, wallet


class DepositStatus(StrEnum):
    PENDING = "pending"
    CREDITED = "credited"


class ChainBinding(Model):
    """The one chain and vault this database belongs to: adnet refuses to start against another."""

    id = fields.IntField(primary_key=True)
    chain_id = fields.BigIntField()
    genesis_hash = fields.CharField(max_length=66)
    vault = wallet()
    gs_token = wallet()
    sov_token = wallet()
    deployed_block = fields.BigIntField(default=0)
    created_at = fields.DatetimeField()

    class Meta:
        table = "chain_binding"


class ChainCursor(Model):
    """The last block a watcher has fully processed, so it resumes there after a restart."""

    name = fields.CharField(max_length=32, primary_key=True)
    block_number = fields.BigIntField()

    class Meta:
        table = "chain_cursor"


class Deposit(Model):
    """A vault ``Deposited`` event credited to a site or an advertiser, each transaction hash credits once."""

    id = fields.CharField(max_length=48, primary_key=True)
    tx_hash = fields.CharField(max_length=66, unique=True)
    log_index = fields.IntField()
    block_number = fields.BigIntField()
    sender = wallet()
    token = wallet()
    token_symbol = fields.CharField(max_length=8)
    amount = token_amount()
    account_ref = fields.CharField(max_length=66)
    site = fields.ForeignKeyField("models.Site", related_name="deposits", null=True, on_delete=fields.RESTRICT)
    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="deposits", null=True,
                                        on_delete=fields.RESTRICT)
    status = fields.CharEnumField(DepositStatus, max_length=16, default=DepositStatus.PENDING)
    created_at = fields.DatetimeField()
    credited_at = fields.DatetimeField(null=True)

    class Meta:
        table = "deposit"
