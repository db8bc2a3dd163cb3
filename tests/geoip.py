"""A small MaxMind-format (GeoIP2 City layout) database, written by the test suite itself with mmdb-writer: the
networks of the documentation ranges, each placed in a country and region, so targeting is tested without a
download."""

from __future__ import annotations

from pathlib import Path

from mmdb_writer import MMDBWriter
from netaddr import IPSet

# address → (country, region); one address of each network.
BERLIN = "81.2.69.160"
CALIFORNIA = "203.0.113.7"
NEW_YORK = "198.51.100.7"
NOWHERE = "192.0.2.1"  # in no network of the database
PLACES = {
    "81.2.69.0/24": ("DE", "BE"),
    "203.0.113.0/24": ("US", "CA"),
    "198.51.100.0/24": ("US", "NY"),
}


def write_database(path: Path) -> Path:
    """Write the database to ``path`` and return it."""
    writer = MMDBWriter(ip_version=6, ipv4_compatible=True, database_type="GeoIP2-City",
                        languages=["en"], description="adnet tests")
    for network, (country, region) in PLACES.items():
        writer.insert_network(IPSet([network]), {"country": {"iso_code": country},
                                                 "subdivisions": [{"iso_code": region}]})
    writer.to_db_file(str(path))
    return path
