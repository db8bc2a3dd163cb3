"""Members of advertiser accounts (``adnet.accounts.members``): other wallets with a role."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.accounts.models import MemberRole
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0017_rewards_sessions')]

    initial = False

    operations = [
        ops.CreateModel(
            name='AdvertiserMember',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('wallet', fields.CharField(db_index=True, max_length=42)),
                ('role', fields.CharEnumField(description='VIEWER: viewer\nMANAGER: manager\nOWNER: owner', enum_type=MemberRole, max_length=16)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
                ('advertiser', fields.ForeignKeyField('models.Advertiser', source_field='advertiser_id', db_constraint=True, to_field='id', related_name='members', on_delete=OnDelete.CASCADE)),
            ],
            options={'table': 'advertiser_member', 'app': 'models', 'unique_together': (('advertiser', 'wallet'),), 'pk_attr': 'id', 'table_description': 'Another wallet that signs in with its own key and acts on an advertiser account with a role.'},
            bases=['Member'],
        ),
    ]
