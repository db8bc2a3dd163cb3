"""Members of publisher accounts (``adnet.accounts.members``): other wallets with a role."""

from tortoise import migrations
from tortoise.migrations import operations as ops
from adnet.accounts.models import MemberRole
from tortoise.fields.base import OnDelete
from tortoise import fields

class Migration(migrations.Migration):
    dependencies = [('models', '0014_webhooks')]

    initial = False

    operations = [
        ops.CreateModel(
            name='PublisherMember',
            fields=[
                ('id', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=48)),
                ('publisher', fields.ForeignKeyField('models.Publisher', source_field='publisher_id', db_constraint=True, to_field='id', related_name='members', on_delete=OnDelete.CASCADE)),
                ('wallet', fields.CharField(db_index=True, max_length=42)),
                ('role', fields.CharEnumField(description='VIEWER: viewer\nMANAGER: manager\nOWNER: owner', enum_type=MemberRole, max_length=16)),
                ('created_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'publisher_member', 'app': 'models', 'unique_together': (('publisher', 'wallet'),), 'pk_attr': 'id', 'table_description': 'Another wallet that signs in with its own key and acts on a publisher account with a role.'},
            bases=['Model'],
        ),
    ]
