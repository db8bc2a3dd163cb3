"""Double-entry bookkeeping in integer smallest units.

Every money movement is one ``LedgerTransaction`` whose postings sum to zero per token. An account's ``balance``
is kept in step with its postings inside the same database transaction, by a compare-and-swap on ``version``.
``(kind, reference)`` is unique, so the same real-world event (a txHash, a completion) is booked at most once.
"""

from tortoise import fields
from tortoise.models import Model

from adnet.models.fields import identifier, token_amount


class LedgerAccount(Model):
    """A balance of one token held for one owner: a site's earnings, a campaign's budget, a task's pool, the
    platform's revenue, or the vault (the contra account for tokens entering and leaving the chain)."""

    id = fields.BigIntField(primary_key=True)
    kind = fields.CharField(max_length=24)
    owner = fields.CharField(max_length=64, default="")
    token = fields.CharField(max_length=8)
    balance = token_amount(default=0)
    allow_negative = fields.BooleanField(default=False)
    version = fields.IntField(default=0)

    class Meta:
        table = "ledger_account"
        unique_together = (("kind", "owner", "token"),)


class LedgerTransaction(Model):
    """One balanced movement of money, booked once per (kind, reference)."""

    id = identifier()
    kind = fields.CharField(max_length=32)
    reference = fields.CharField(max_length=140)
    memo = fields.CharField(max_length=500, default="")
    created_at = fields.DatetimeField()

    class Meta:
        table = "ledger_transaction"
        unique_together = (("kind", "reference"),)


class LedgerPosting(Model):
    """One leg of a transaction: a signed amount on one account."""

    id = fields.BigIntField(primary_key=True)
    transaction = fields.ForeignKeyField("models.LedgerTransaction", related_name="postings",
                                         on_delete=fields.RESTRICT)
    account = fields.ForeignKeyField("models.LedgerAccount", related_name="postings", on_delete=fields.RESTRICT)
    amount = token_amount()
    created_at = fields.DatetimeField()

    class Meta:
        table = "ledger_posting"
        indexes = (("account_id", "created_at"),)
