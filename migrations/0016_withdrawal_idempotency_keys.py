"""Withdrawals that cannot be lost: the Idempotency-Key a site or an advertiser sent with a withdrawal, unique per
holder, and the indexes that list a holder's withdrawals newest first."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from tortoise.fields.base import OnDelete
from tortoise import fields
from tortoise.indexes import Index

class Migration(migrations.Migration):
    dependencies = [('models', '0015_publisher_members')]

    initial = False

    operations = [
        ops.CreateModel(
            name='WithdrawalKey',
            fields=[
                ('id', fields.BigIntField(generated=True, primary_key=True, unique=True, db_index=True)),
                ('holder', fields.CharField(description="the site's or the advertiser's id", max_length=64)),
                ('key', fields.CharField(max_length=255)),
                ('withdrawal', fields.OneToOneField('models.Withdrawal', source_field='withdrawal_id', null=True, description='set in the same transaction, so never null once committed', db_constraint=True, to_field='id', related_name='idempotency_key', on_delete=OnDelete.RESTRICT)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'withdrawal_key', 'app': 'models', 'unique_together': (('holder', 'key'),), 'pk_attr': 'id', 'table_description': "An ``Idempotency-Key`` a site or an advertiser sent with a withdrawal. The withdrawal's transaction inserts it"},
            bases=['Model'],
        ),
        ops.AddIndex(
            model_name='Withdrawal',
            index=Index(fields=['site_id', 'created_at']),
        ),
        ops.AddIndex(
            model_name='Withdrawal',
            index=Index(fields=['advertiser_id', 'created_at']),
        ),
    ]
