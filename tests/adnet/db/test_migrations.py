"""One migration history for both databases: it matches the models and builds the schema from nothing."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest
from tortoise import Tortoise, connections
from tortoise.exceptions import IntegrityError
from tortoise.migrations.api import migrate as run_migrations

from adnet.campaigns import taxonomy
from adnet.campaigns.models import Campaign, Category, Creative
from adnet.core.ids import new_id
from adnet.core.wallets import dev_accounts
from adnet.db import config as db
from adnet.db import migrations, sql
from adnet.db.config import recreate_postgres, tortoise_config
from tests.conftest import migrated_postgres, migrated_sqlite
from tests.factories import EPOCH, make_advertiser, make_creative

EXPECTED_TABLES = {"publisher", "site", "verified_domain", "campaign", "creative", "task", "completion", "claim",
                   "dedup_key", "tracking_event", "deposit", "ledger_account", "ledger_transaction", "ledger_posting",
                   "interaction", "survey_session", "withdrawal", "exchange", "auth_nonce", "auth_session"}


@pytest.fixture
async def fresh_database_url(database_url: str, tmp_path) -> str:
    """An empty database of the kind the suite runs on (SQLite file, or PostgreSQL database beside the suite's)."""
    if database_url.startswith("sqlite://"):
        return f"sqlite://{tmp_path / 'fresh.sqlite3'}"
    url = database_url + "_fresh"
    await recreate_postgres(url)
    return url


@pytest.fixture
def migrated_database_url(database_url: str, tmp_path) -> str:
    """A new database of the kind the suite runs on with every migration applied from nothing: a copy of the run's
    migrated template (``tests.conftest.migrated_sqlite``, ``migrated_postgres``)."""
    if database_url.startswith("sqlite://"):
        return migrated_sqlite(tmp_path / "migrated.sqlite3")
    url = database_url + "_migrated_copy"
    migrated_postgres(url)
    return url


async def test_models_and_migrations_agree(database_url):
    assert await migrations.pending_changes(database_url) == []


async def test_migrations_build_the_schema_from_nothing_and_apply_once(fresh_database_url):
    await migrations.migrate(fresh_database_url)
    await migrations.migrate(fresh_database_url)

    await db.open_database(fresh_database_url)
    try:
        tables = await _tables()
        assert EXPECTED_TABLES <= tables
        model_tables = {model._meta.db_table for model in Tortoise.apps["models"].values()}
        assert model_tables <= tables
        assert await migrations.pending_changes(fresh_database_url) == []
    finally:
        await db.close_database()


async def _tables() -> set[str]:
    connection = connections.get("default")
    if connection.capabilities.dialect == "postgres":
        rows = await connection.execute_query_dict(
            "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public'")
    else:
        rows = await connection.execute_query_dict("SELECT name FROM sqlite_master WHERE type = 'table'")
    return {row["name"] for row in rows}


async def test_stored_addresses_become_networks(fresh_database_url):
    """0003 keeps only the network of the addresses events stored before it (run on a table of the columns it
    touches, in the suite's database)."""
    step = importlib.import_module("migrations.0003_tracking_clients").addresses_to_networks
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        await connection.execute_script("CREATE TABLE tracking_event (id VARCHAR(48) PRIMARY KEY, ip VARCHAR(45), "
                                        "client_network VARCHAR(45) NOT NULL DEFAULT '')")
        await connection.execute_script("INSERT INTO tracking_event (id, ip) VALUES ('a', '203.0.113.7'), "
                                        "('b', '203.0.113.99'), ('c', '2001:db8:1:2::7'), ('d', '')")
        await step(None, SimpleNamespace(client=connection))
        rows = await connection.execute_query_dict("SELECT id, client_network FROM tracking_event ORDER BY id")
    finally:
        await db.close_database()
    assert [(row["id"], row["client_network"]) for row in rows] == [
        ("a", "203.0.113.0/24"), ("b", "203.0.113.0/24"), ("c", "2001:db8:1::/48"), ("d", "")]


async def test_sites_become_unverified_and_a_domain_may_be_registered_by_several_publishers(fresh_database_url):
    """0004 on a database that holds sites: each keeps its rows (the tables that cascade from ``site`` too),
    becomes ``unverified`` with a token of its own, except a site marked verified before (the demo's), which keeps
    its domain; afterwards two publishers may register one domain, one publisher not twice."""
    await run_migrations(config=tortoise_config(fresh_database_url), target="models.0003_tracking_clients")
    await Tortoise.close_connections()
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        await connection.execute_script(
            "INSERT INTO publisher (id, wallet, created_at) VALUES ('pub_1', '0x01', '2026-01-01T00:00:00+00:00'), "
            "('pub_2', '0x02', '2026-01-01T00:00:00+00:00');"
            "INSERT INTO site (id, publisher_id, domain, name, verified, active, created_at) VALUES "
            "('site_a', 'pub_1', 'a.example', '', FALSE, TRUE, '2026-01-01T00:00:00+00:00'), "
            "('site_b', 'pub_1', 'b.example', '', FALSE, TRUE, '2026-01-02T00:00:00+00:00'), "
            "('site_demo', 'pub_2', '127.0.0.1', 'Demo site', TRUE, TRUE, '2026-01-03T00:00:00+00:00');"
            "INSERT INTO site_daily_stat (site_id, day, requests, filled, impressions, billable_impressions, clicks, "
            "billable_clicks) VALUES ('site_a', '2026-01-01', 5, 4, 3, 2, 1, 0);")
    finally:
        await db.close_database()

    await migrations.migrate(fresh_database_url)
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        rows = await connection.execute_query_dict(
            "SELECT id, domain, state, verified, verification_token, proof_method, verified_at, last_checked_at, "
            "check_failure, failed_checks FROM site ORDER BY id")
        held = await connection.execute_query_dict("SELECT domain, site_id FROM verified_domain")
        stats = await connection.execute_query_dict("SELECT site_id, impressions FROM site_daily_stat")
        await connection.execute_script(
            "INSERT INTO site (id, publisher_id, domain, name, verified, active, created_at, state, "
            "verification_token, check_failure, failed_checks) VALUES ('site_c', 'pub_2', 'a.example', '', FALSE, "
            "TRUE, '2026-01-04T00:00:00+00:00', 'unverified', 't', '', 0)")
        with pytest.raises(IntegrityError):
            await connection.execute_script(
                "INSERT INTO site (id, publisher_id, domain, name, verified, active, created_at, state, "
                "verification_token, check_failure, failed_checks) VALUES ('site_d', 'pub_1', 'a.example', '', "
                "FALSE, TRUE, '2026-01-04T00:00:00+00:00', 'unverified', 't', '', 0)")
        assert await migrations.pending_changes(fresh_database_url) == []
    finally:
        await db.close_database()
    assert [(row["id"], row["domain"], row["state"], bool(row["verified"]), row["proof_method"],
             row["last_checked_at"], row["check_failure"], row["failed_checks"]) for row in rows] == [
        ("site_a", "a.example", "unverified", False, None, None, "", 0),
        ("site_b", "b.example", "unverified", False, None, None, "", 0),
        ("site_demo", "127.0.0.1", "verified", True, None, None, "", 0)]
    assert [row["verified_at"] is None for row in rows] == [True, True, False]
    tokens = [row["verification_token"] for row in rows]
    assert all(len(token) == 32 and int(token, 16) >= 0 for token in tokens) and len(set(tokens)) == 3
    assert held == [{"domain": "127.0.0.1", "site_id": "site_demo"}]
    assert stats == [{"site_id": "site_a", "impressions": 3}]


async def test_events_recorded_before_are_counted_per_day_and_reason(fresh_database_url):
    """0005 counts the events recorded before it into ``traffic_daily`` (by UTC day, site, campaign, type and
    reason, with what they cost and earned), so the reports that read it keep their history."""
    step = importlib.import_module("migrations.0005_billing_windows").count_recorded_events
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        moment = "TIMESTAMPTZ" if connection.capabilities.dialect == "postgres" else "VARCHAR(40)"
        await connection.execute_script(
            f"CREATE TABLE tracking_event (id VARCHAR(48) PRIMARY KEY, site_id VARCHAR(48), campaign_id VARCHAR(48), "
            f"type VARCHAR(16), refusal_reason VARCHAR(32), cost NUMERIC(40, 0), publisher_amount NUMERIC(40, 0), "
            f"received_at {moment});"
            "CREATE TABLE traffic_daily (day DATE, site_id VARCHAR(48), campaign_id VARCHAR(48), type VARCHAR(16), "
            "reason VARCHAR(32), events INT, cost NUMERIC(40, 0), publisher_amount NUMERIC(40, 0));"
            "INSERT INTO tracking_event VALUES "
            "('a', 's', 'c', 'IMPRESSION', NULL, 2000, 1400, '2026-01-01 10:00:00+00:00'), "
            "('b', 's', 'c', 'IMPRESSION', NULL, 2000, 1400, '2026-01-02 01:30:00+02:00'), "
            "('c', 's', 'c', 'IMPRESSION', 'bot_user_agent', 0, 0, '2026-01-01 12:00:00+00:00'), "
            "('d', 's', 'c', 'CLICK', NULL, 100, 70, '2026-01-02 12:00:00+00:00')")
        await step(None, SimpleNamespace(client=connection))
        rows = await connection.execute_query_dict(
            "SELECT day, type, reason, events, cost, publisher_amount FROM traffic_daily ORDER BY day, type, reason")
    finally:
        await db.close_database()
    assert [(str(row["day"]), row["type"], row["reason"], row["events"], int(row["cost"]),
             int(row["publisher_amount"])) for row in rows] == [
        ("2026-01-01", "IMPRESSION", "", 2, 4000, 2800),  # 01:30 at +02:00 is still 1 January in UTC
        ("2026-01-01", "IMPRESSION", "bot_user_agent", 1, 0, 0),
        ("2026-01-02", "CLICK", "", 1, 100, 70),
    ]


Index = tuple[str, bool, tuple[str, ...]]


async def _indexes() -> set[Index]:
    """Every index of the schema's tables, as the database's catalog has it: (table, unique, its columns)."""
    connection = connections.get("default")
    if connection.capabilities.dialect == "postgres":
        rows = await connection.execute_query_dict(
            "SELECT t.relname AS table_name, x.indisunique AS is_unique, array_agg(a.attname ORDER BY k.n) AS columns "
            "FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid "
            "JOIN pg_namespace ns ON ns.oid = t.relnamespace AND ns.nspname = 'public' "
            "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n) "
            "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum "
            "GROUP BY x.indexrelid, t.relname, x.indisunique")
        return {(row["table_name"], bool(row["is_unique"]), tuple(row["columns"])) for row in rows}
    found = set()
    for table in await connection.execute_query_dict("SELECT name FROM sqlite_master WHERE type = 'table'"):
        for index in await connection.execute_query_dict(f'PRAGMA index_list("{table["name"]}")'):
            columns = await connection.execute_query_dict(f'PRAGMA index_info("{index["name"]}")')
            found.add((table["name"], bool(index["unique"]),
                       tuple(column["name"] for column in sorted(columns, key=lambda column: column["seqno"]))))
    return found


async def _migrated_indexes(database_url: str) -> set[Index]:
    await db.open_database(database_url)
    try:
        return {index for index in await _indexes() if index[0] != "tortoise_migrations"}
    finally:
        await db.close_database()


async def test_migrations_build_every_index_the_models_declare(migrated_database_url, database_url, tmp_path):
    """Migrated from nothing, the schema has exactly the indexes of the schema the models generate: a migration
    that rebuilt a table (SQLite cannot alter a column in place) and lost its indexes shows here (0007 restored
    those 0003 lost)."""
    if database_url.startswith("sqlite://"):
        declared_url = f"sqlite://{tmp_path / 'declared.sqlite3'}"
    else:
        declared_url = database_url + "_declared"
        await recreate_postgres(declared_url)
    await Tortoise.init(config=tortoise_config(declared_url))
    try:
        await Tortoise.generate_schemas()
        declared = await _indexes()
    finally:
        await Tortoise.close_connections()

    assert await _migrated_indexes(migrated_database_url) == declared
    assert ("tracking_event", False, ("token_ref",)) in declared


async def test_the_limits_unique_keys_are_all_in_the_schema(migrated_database_url):
    """Migrated from nothing, the tables of the limits hold every unique key: 0006 added the device's keys of
    responses and quiz tries beside the keys already there, without rebuilding a table and dropping one."""
    keys = {(table, columns) for table, unique, columns in await _migrated_indexes(migrated_database_url) if unique}
    assert {("interaction", ("unit_id", "respondent")), ("interaction", ("unit_id", "fingerprint", "fingerprint_slot")),
            ("task_attempt", ("task_id", "wallet", "attempt")),
            ("task_attempt", ("task_id", "fingerprint", "fingerprint_attempt")),
            ("completion", ("task_id", "wallet", "wallet_slot")),
            ("completion", ("task_id", "fingerprint", "fingerprint_slot")), ("completion", ("tx_hash",)),
            ("task_visit", ("task_id", "fingerprint"))} <= keys


async def test_webhook_endpoints_in_use_take_their_slots_in_order(fresh_database_url):
    """0024 numbers each wallet's endpoints in use in the order they were registered (a removed one holds no slot),
    so the unique key added after it holds, and a wallet cannot take a slot twice afterwards."""
    await run_migrations(config=tortoise_config(fresh_database_url), target="models.0023_rate_limits")
    await Tortoise.close_connections()
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        await connection.execute_script(
            "INSERT INTO webhook_endpoint (id, wallet, url, events, secret, created_at, deleted_at) VALUES "
            "('wh_b', '0x01', 'https://a.example/', 'site.verified', 's', '2026-01-02T00:00:00+00:00', NULL), "
            "('wh_a', '0x01', 'https://a.example/', 'site.verified', 's', '2026-01-02T00:00:00+00:00', NULL), "
            "('wh_c', '0x01', 'https://a.example/', 'site.verified', 's', '2026-01-01T00:00:00+00:00', "
            "'2026-01-03T00:00:00+00:00'), "
            "('wh_d', '0x01', 'https://a.example/', 'site.verified', 's', '2026-01-03T00:00:00+00:00', NULL), "
            "('wh_e', '0x02', 'https://b.example/', 'site.verified', 's', '2026-01-05T00:00:00+00:00', NULL)")
    finally:
        await db.close_database()

    await migrations.migrate(fresh_database_url)
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        rows = await connection.execute_query_dict(
            "SELECT id, slot, consecutive_failures, paused_at FROM webhook_endpoint ORDER BY id")
        with pytest.raises(IntegrityError):
            await connection.execute_script(
                "INSERT INTO webhook_endpoint (id, wallet, url, events, secret, created_at, slot, "
                "consecutive_failures) VALUES ('wh_f', '0x01', 'https://a.example/', 'site.verified', 's', "
                "'2026-01-06T00:00:00+00:00', 1, 0)")
    finally:
        await db.close_database()
    assert [(row["id"], row["slot"], row["consecutive_failures"], row["paused_at"]) for row in rows] == [
        ("wh_a", 0, 0, None), ("wh_b", 1, 0, None), ("wh_c", None, 0, None), ("wh_d", 2, 0, None),
        ("wh_e", 0, 0, None)]


async def test_the_demo_banners_stored_with_an_origin_become_paths_on_adnet(fresh_database_url):
    """0026 rewrites the demo advertiser's banners that an older ``adnet demo`` stored with the origin it was loaded
    on to their path on adnet; every other banner stays as it was."""
    await run_migrations(config=tortoise_config(fresh_database_url), target="models.0025_announced_changes")
    await Tortoise.close_connections()
    demo_banner = "http://127.0.0.1:8000/static/demo/banner-2-728x90.svg"
    await db.open_database(fresh_database_url)
    try:
        demo = await _campaign_of_0025(await make_advertiser(dev_accounts()[1].address.lower()))
        other = await _campaign_of_0025(await make_advertiser())
        creatives = [await make_creative(demo, banner_url=demo_banner),
                     await make_creative(demo, banner_url="https://cdn.example/banner.png"),
                     await make_creative(other, banner_url=demo_banner)]
    finally:
        await db.close_database()

    await migrations.migrate(fresh_database_url)
    await db.open_database(fresh_database_url)
    try:
        banners = [(await Creative.get(id=creative.id)).banner_url for creative in creatives]
    finally:
        await db.close_database()
    assert banners == ["/static/demo/banner-2-728x90.svg", "https://cdn.example/banner.png", demo_banner]


async def _campaign_of_0025(advertiser) -> Campaign:
    """A campaign written with the columns ``campaign`` had at 0025 (the model has more since)."""
    campaign_id = new_id("cmp")
    await sql.execute(
        "INSERT INTO campaign (id, advertiser_id, name, status, rejection_reason, starts_at, cpm, cpc, budget, sizes, "
        "placements, site_allow, site_deny, rotation, frequency_hours, targeting, created_at, updated_at) VALUES "
        "(:id, :advertiser, 'Old', 'approved', '', :at, 1, 1, 1, '[]', '[]', '[]', '[]', 'even', 24, '{}', :at, :at)",
        id=campaign_id, advertiser=advertiser.id, at=EPOCH)
    campaign = Campaign(id=campaign_id)
    campaign._saved_in_db = True  # read back whole, it would ask for the columns added since
    return campaign


async def test_every_stored_campaign_category_gets_its_iab_id(fresh_database_url):
    """0031 gives each campaign stored before it the IAB Ad Product Taxonomy id of its category, from the data file
    (run on a table of the columns it touches, in the suite's database): none is left without one."""
    step = importlib.import_module("migrations.0031_sellers_ads_txt_and_iab_ids").map_categories
    await db.open_database(fresh_database_url)
    try:
        connection = connections.get("default")
        await connection.execute_script("CREATE TABLE campaign (id VARCHAR(48) PRIMARY KEY, category VARCHAR(16), "
                                        "category_iab_id VARCHAR(16) NOT NULL DEFAULT '')")
        values = ", ".join(f"('cmp_{category.value}', '{category.value}')" for category in Category)
        await connection.execute_script(f"INSERT INTO campaign (id, category) VALUES {values}")
        await step(None, SimpleNamespace(client=connection))
        rows = await connection.execute_query_dict("SELECT category, category_iab_id FROM campaign")
    finally:
        await db.close_database()
    assert {row["category"]: row["category_iab_id"] for row in rows} == {
        category.value: taxonomy.iab_id(category) for category in Category}
    assert {"nft": "1451", "exchange": "1449", "gambling": "1361"}.items() <= {
        row["category"]: row["category_iab_id"] for row in rows}.items()
