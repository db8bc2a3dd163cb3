"""The indexes of ``tracking_event`` that SQLite lost: 0003's ``AlterField`` rebuilt the table on SQLite (it cannot
alter a column in place) without recreating its indexes, so the lookup of a click's impression by ``token_ref`` and
the reports by site or campaign and time scanned the whole table. PostgreSQL altered the column in place and kept
them; ``IF NOT EXISTS`` with the names the models give them leaves its indexes as they are."""

from tortoise import migrations
from tortoise.migrations import operations as ops


class Migration(migrations.Migration):
    dependencies = [('models', '0006_device_limits')]

    initial = False

    operations = [
        ops.RunSQL(
            [
                "CREATE INDEX IF NOT EXISTS idx_tracking_ev_token_r_05d761 ON tracking_event (token_ref)",
                "CREATE INDEX IF NOT EXISTS idx_tracking_ev_site_id_65fb9f ON tracking_event (site_id, received_at)",
                "CREATE INDEX IF NOT EXISTS idx_tracking_ev_campaig_c0a570 ON tracking_event (campaign_id, "
                "received_at)",
            ],
            reverse_sql=ops.RunSQL.noop,
        ),
    ]
