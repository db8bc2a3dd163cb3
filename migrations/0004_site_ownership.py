"""Site ownership: a domain is no longer unique among sites (registering proves nothing), one site per publisher
and domain, the verification state of each site, and ``verified_domain``, whose primary key lets one site hold a
domain verified.

The operations below describe the models' new state only; ``own_sites`` changes the tables itself, in one
transaction, because Tortoise would rebuild SQLite's ``site`` table (to drop the domain's unique constraint) with
foreign keys on, which deletes the rows of tables that cascade from it. Existing sites become ``unverified``, each
gets its random verification token, and a site marked ``verified`` before (only the development demo's) keeps its
domain, to be re-checked by the next ``site-checks`` run.
"""

import secrets

from tortoise import fields, migrations
from tortoise.fields.base import OnDelete
from tortoise.migrations import operations as ops
from tortoise.migrations.constraints import UniqueConstraint
from tortoise.transactions import in_transaction

from adnet.accounts.models import ProofMethod, SiteState, new_verification_token

DOMAIN_INDEX = "idx_site_domain_9d35fe"
PUBLISHER_DOMAIN_KEY = "uid_site_publish_bf9aae"
NEW_COLUMNS = ("state", "verification_token", "proof_method", "verified_at", "last_checked_at", "check_failure",
               "failed_checks")

SQLITE_SITE = """CREATE TABLE "new__site" (
    "id" VARCHAR(48) NOT NULL PRIMARY KEY,
    "domain" VARCHAR(253) NOT NULL,
    "name" VARCHAR(120) NOT NULL,
    "verified" INT NOT NULL,
    "active" INT NOT NULL,
    "created_at" TIMESTAMP NOT NULL,
    "state" VARCHAR(16) NOT NULL,
    "verification_token" VARCHAR(32) NOT NULL,
    "proof_method" VARCHAR(16),
    "verified_at" TIMESTAMP,
    "last_checked_at" TIMESTAMP,
    "check_failure" VARCHAR(300) NOT NULL,
    "failed_checks" SMALLINT NOT NULL,
    "publisher_id" VARCHAR(48) NOT NULL REFERENCES "publisher" ("id") ON DELETE RESTRICT,
    CONSTRAINT "uid_site_publish_bf9aae" UNIQUE ("publisher_id", "domain")
)"""
SQLITE_COPY = """INSERT INTO "new__site" ("id", "domain", "name", "verified", "active", "created_at", "state",
    "verification_token", "proof_method", "verified_at", "last_checked_at", "check_failure", "failed_checks",
    "publisher_id")
SELECT "id", "domain", "name", "verified", "active", "created_at",
    CASE WHEN "verified" THEN 'verified' ELSE 'unverified' END, '', NULL,
    CASE WHEN "verified" THEN "created_at" END, NULL, '', 0, "publisher_id"
FROM "site\""""
SQLITE_VERIFIED_DOMAIN = """CREATE TABLE "verified_domain" (
    "domain" VARCHAR(253) NOT NULL PRIMARY KEY,
    "verified_at" TIMESTAMP NOT NULL,
    "site_id" VARCHAR(48) NOT NULL UNIQUE REFERENCES "site" ("id") ON DELETE CASCADE
)"""

POSTGRES_DOMAIN_KEYS = """SELECT con.conname FROM pg_constraint con
JOIN pg_attribute att ON att.attrelid = con.conrelid AND att.attnum = ANY (con.conkey)
WHERE con.conrelid = 'site'::regclass AND con.contype = 'u' AND att.attname = 'domain'
AND array_length(con.conkey, 1) = 1"""
POSTGRES_COLUMNS = [
    """ALTER TABLE "site" ADD COLUMN "state" VARCHAR(16) NOT NULL DEFAULT 'unverified'""",
    """ALTER TABLE "site" ADD COLUMN "verification_token" VARCHAR(32) NOT NULL DEFAULT ''""",
    """ALTER TABLE "site" ADD COLUMN "proof_method" VARCHAR(16)""",
    """ALTER TABLE "site" ADD COLUMN "verified_at" TIMESTAMPTZ""",
    """ALTER TABLE "site" ADD COLUMN "last_checked_at" TIMESTAMPTZ""",
    """ALTER TABLE "site" ADD COLUMN "check_failure" VARCHAR(300) NOT NULL DEFAULT ''""",
    """ALTER TABLE "site" ADD COLUMN "failed_checks" SMALLINT NOT NULL DEFAULT 0""",
    """UPDATE "site" SET "state" = 'verified', "verified_at" = "created_at" WHERE "verified\"""",
    """ALTER TABLE "site" ALTER COLUMN "state" DROP DEFAULT, ALTER COLUMN "verification_token" DROP DEFAULT,
       ALTER COLUMN "check_failure" DROP DEFAULT, ALTER COLUMN "failed_checks" DROP DEFAULT""",
    f"""ALTER TABLE "site" ADD CONSTRAINT "{PUBLISHER_DOMAIN_KEY}" UNIQUE ("publisher_id", "domain")""",
]
POSTGRES_VERIFIED_DOMAIN = """CREATE TABLE "verified_domain" (
    "domain" VARCHAR(253) NOT NULL PRIMARY KEY,
    "verified_at" TIMESTAMPTZ NOT NULL,
    "site_id" VARCHAR(48) NOT NULL UNIQUE REFERENCES "site" ("id") ON DELETE CASCADE
)"""
CLAIM_VERIFIED = """INSERT INTO "verified_domain" ("domain", "verified_at", "site_id")
SELECT "domain", "created_at", "id" FROM "site" WHERE "verified\""""


async def own_sites(apps, editor) -> None:
    """Change ``site`` and create ``verified_domain`` in one transaction (SQLite with its foreign keys off, as its
    documented way of rebuilding a table requires), then give every site its token."""
    client = editor.client
    postgres = client.capabilities.dialect == "postgres"
    if not postgres:
        await client.execute_script("PRAGMA foreign_keys = OFF")
    try:
        async with in_transaction(client.connection_name) as connection:
            if postgres:
                for row in await connection.execute_query_dict(POSTGRES_DOMAIN_KEYS):
                    await connection.execute_script(f'ALTER TABLE "site" DROP CONSTRAINT "{row["conname"]}"')
                for statement in POSTGRES_COLUMNS:
                    await connection.execute_script(statement)
                await connection.execute_script(POSTGRES_VERIFIED_DOMAIN)
            else:
                await connection.execute_script(SQLITE_SITE)
                await connection.execute_script(SQLITE_COPY)
                await connection.execute_script('DROP TABLE "site"')
                await connection.execute_script('ALTER TABLE "new__site" RENAME TO "site"')
                await connection.execute_script(SQLITE_VERIFIED_DOMAIN)
            await connection.execute_script(f'CREATE INDEX "{DOMAIN_INDEX}" ON "site" ("domain")')
            await connection.execute_script(CLAIM_VERIFIED)
            give_token = ('UPDATE "site" SET "verification_token" = $1 WHERE "id" = $2' if postgres
                          else 'UPDATE "site" SET "verification_token" = ? WHERE "id" = ?')
            for row in await connection.execute_query_dict('SELECT "id" FROM "site"'):
                await connection.execute_query(give_token, [secrets.token_hex(16), row["id"]])
            if not postgres:
                broken = await connection.execute_query_dict("PRAGMA foreign_key_check")
                if broken:
                    raise RuntimeError(f"foreign keys broken by the rebuild of site: {broken!r}")
    finally:
        if not postgres:
            await client.execute_script("PRAGMA foreign_keys = ON")


class InStateOnly:
    """An operation's change to the models' state, its tables being changed by ``own_sites``."""

    async def database_forward(self, app_label, old_state, new_state, state_editor=None) -> None:
        return None

    async def database_backward(self, app_label, old_state, new_state, state_editor=None) -> None:
        return None


class CreateModel(InStateOnly, ops.CreateModel):
    pass


class AlterModelOptions(InStateOnly, ops.AlterModelOptions):
    pass


class AlterField(InStateOnly, ops.AlterField):
    pass


class AddField(InStateOnly, ops.AddField):
    pass


class AddConstraint(InStateOnly, ops.AddConstraint):
    pass


class Migration(migrations.Migration):
    dependencies = [('models', '0003_tracking_clients')]

    initial = False
    # SQLite's foreign keys can be switched off outside a transaction only; ``own_sites`` opens its own.
    atomic = False

    operations = [
        ops.RunPython(own_sites, ops.RunPython.noop),
        CreateModel(
            name='VerifiedDomain',
            fields=[
                ('domain', fields.CharField(primary_key=True, unique=True, db_index=True, max_length=253)),
                ('site', fields.OneToOneField('models.Site', source_field='site_id', db_constraint=True, to_field='id', related_name='held_domain', on_delete=OnDelete.CASCADE)),
                ('verified_at', fields.DatetimeField(auto_now=False, auto_now_add=False)),
            ],
            options={'table': 'verified_domain', 'app': 'models', 'pk_attr': 'domain', 'table_description': 'The site that holds a domain verified: one row per domain (its primary key), so however many sites prove'},
            bases=['Model'],
        ),
        AlterModelOptions(
            name='Site',
            options={'table': 'site', 'app': 'models', 'unique_together': (('publisher', 'domain'),), 'pk_attr': 'id', 'table_description': 'A registered domain of a publisher: only registered, active sites are served, and only verified ones earn.'},
        ),
        AlterField(
            model_name='Site',
            name='domain',
            field=fields.CharField(db_index=True, max_length=253),
        ),
        AddField(
            model_name='Site',
            name='check_failure',
            field=fields.CharField(default='', description='why the last check failed, for the owner (empty after a success)', max_length=300),
        ),
        AddField(
            model_name='Site',
            name='failed_checks',
            field=fields.SmallIntField(default=0, description='consecutive failed re-checks while verified'),
        ),
        AddField(
            model_name='Site',
            name='last_checked_at',
            field=fields.DatetimeField(null=True, description='when adnet last looked for the proof', auto_now=False, auto_now_add=False),
        ),
        AddField(
            model_name='Site',
            name='proof_method',
            field=fields.CharEnumField(null=True, description='how the domain was last proven', enum_type=ProofMethod, max_length=16),
        ),
        AddField(
            model_name='Site',
            name='state',
            field=fields.CharEnumField(default=SiteState.UNVERIFIED, description='UNVERIFIED: unverified\nVERIFIED: verified\nLAPSED: lapsed', enum_type=SiteState, max_length=16),
        ),
        AddField(
            model_name='Site',
            name='verification_token',
            field=fields.CharField(default=new_verification_token, description='what the owner publishes on the domain to prove it', max_length=32),
        ),
        AddField(
            model_name='Site',
            name='verified_at',
            field=fields.DatetimeField(null=True, description='when the site last took its domain', auto_now=False, auto_now_add=False),
        ),
        AddConstraint(
            model_name='Site',
            constraint=UniqueConstraint(fields=('publisher', 'domain'), name=None),
        ),
    ]
