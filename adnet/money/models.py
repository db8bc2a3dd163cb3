"""Money: double-entry bookkeeping in integer smallest units, the claims that pay value out of the vault, the
deposits that bring it in, and what publishers and advertisers do with their balances (withdrawals, exchanges).

Every money movement is one ``LedgerTransaction`` whose postings sum to zero per token. An account's ``balance``
is kept in step with its postings inside the same database transaction, by a compare-and-swap on ``version``.
``(kind, reference)`` is unique, so the same real-world event (a txHash, a completion) is booked at most once.
"""

from enum import StrEnum

from tortoise import fields
from tortoise.models import Model

from adnet.db.fields import identifier, token_amount, wallet


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
    transaction_id: str
    account = fields.ForeignKeyField("models.LedgerAccount", related_name="postings", on_delete=fields.RESTRICT)
    account_id: int
    amount = token_amount()
    created_at = fields.DatetimeField()

    class Meta:
        table = "ledger_posting"
        indexes = (("account_id", "created_at"),)


class ClaimStatus(StrEnum):
    ISSUED = "issued"
    REDEEMED = "redeemed"
    EXPIRED = "expired"


class ClaimPurpose(StrEnum):
    COMPLETION = "completion"
    INTERACTION = "interaction"
    WITHDRAWAL = "withdrawal"


class WithdrawalStatus(StrEnum):
    ISSUED = "issued"
    REDEEMED = "redeemed"
    RELEASED = "released"


class SignerNonce(Model):
    """The next claim nonce of a signer: a per-signer sequence advanced by one atomic increment."""

    signer = wallet(primary_key=True)
    next_nonce = fields.BigIntField(default=0)

    class Meta:
        table = "signer_nonce"


class Claim(Model):
    """An EIP-712 claim we signed. Asking again for the same claimRef returns this row, never a new signature."""

    id = identifier()
    claim_ref = fields.CharField(max_length=66, unique=True)
    purpose = fields.CharEnumField(ClaimPurpose, max_length=16)
    chain_id = fields.BigIntField()
    vault = wallet()
    signer = wallet()
    nonce = fields.BigIntField()
    recipient = wallet(db_index=True)
    token = wallet()
    token_symbol = fields.CharField(max_length=8)
    amount = token_amount()
    deadline = fields.BigIntField(description="Unix seconds")
    signature = fields.CharField(max_length=132)
    status = fields.CharEnumField(ClaimStatus, max_length=16, default=ClaimStatus.ISSUED)
    created_at = fields.DatetimeField()
    redeemed_at = fields.DatetimeField(null=True)
    redeemed_tx = fields.CharField(max_length=66, null=True)

    class Meta:
        table = "claim"
        unique_together = (("signer", "nonce"),)
        indexes = (("status", "deadline"),)


class Withdrawal(Model):
    """A publisher's (or advertiser's) withdrawal: the debit and the claim that pays it out."""

    id = identifier()
    site = fields.ForeignKeyField("models.Site", related_name="withdrawals", null=True, on_delete=fields.RESTRICT)
    site_id: str | None
    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="withdrawals", null=True,
                                        on_delete=fields.RESTRICT)
    advertiser_id: str | None
    wallet = wallet()
    token_symbol = fields.CharField(max_length=8)
    amount = token_amount()
    claim = fields.OneToOneField("models.Claim", related_name="withdrawal", on_delete=fields.RESTRICT)
    claim_id: str
    status = fields.CharEnumField(WithdrawalStatus, max_length=16, default=WithdrawalStatus.ISSUED)
    created_at = fields.DatetimeField()
    settled_at = fields.DatetimeField(null=True)

    class Meta:
        table = "withdrawal"
        indexes = (("site_id", "created_at"), ("advertiser_id", "created_at"))


class WithdrawalKey(Model):
    """An ``Idempotency-Key`` a site or an advertiser sent with a withdrawal. The withdrawal's transaction inserts it
    before any money moves, so its unique key on (holder, key) makes a concurrent retry wait for the first request
    and then fail on the key, and a later one find the withdrawal it names (``adnet.money.withdrawals``)."""

    id = fields.BigIntField(primary_key=True)
    holder = fields.CharField(max_length=64, description="the site's or the advertiser's id")
    key = fields.CharField(max_length=255)
    withdrawal = fields.OneToOneField("models.Withdrawal", related_name="idempotency_key", null=True,
                                      on_delete=fields.RESTRICT,
                                      description="set in the same transaction, so never null once committed")
    withdrawal_id: str | None
    created_at = fields.DatetimeField()

    class Meta:
        table = "withdrawal_key"
        unique_together = (("holder", "key"),)


class Exchange(Model):
    """A conversion of a site's claimable balance between SOV and G$ at the vault's protocol rate."""

    id = identifier()
    site = fields.ForeignKeyField("models.Site", related_name="exchanges", on_delete=fields.RESTRICT)
    site_id: str
    wallet = wallet()
    from_token = fields.CharField(max_length=8)
    to_token = fields.CharField(max_length=8)
    amount_in = token_amount()
    amount_out = token_amount()
    rate = token_amount(description="G$ smallest units per 1e18 SOV smallest units, as read from the vault")
    created_at = fields.DatetimeField()

    class Meta:
        table = "exchange"


class DepositStatus(StrEnum):
    PENDING = "pending"
    CREDITED = "credited"


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
    site_id: str | None
    advertiser = fields.ForeignKeyField("models.Advertiser", related_name="deposits", null=True,
                                        on_delete=fields.RESTRICT)
    advertiser_id: str | None
    status = fields.CharEnumField(DepositStatus, max_length=16, default=DepositStatus.PENDING)
    created_at = fields.DatetimeField()
    credited_at = fields.DatetimeField(null=True)

    class Meta:
        table = "deposit"
