"""adnet's view of the chain: the chain and vault it is bound to, and the watcher's cursor."""

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import wallet


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
