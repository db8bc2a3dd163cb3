"""Commands that read adnet's state refuse, with one line and status 2, to run without it, and create nothing: no
data directory, no database, no development chain (whose fresh contracts would bind the database)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from adnet.chain import devserver
from adnet.cli.main import main
from adnet.config import load_settings
from tests.conftest import migrated_sqlite

READERS = [("audit",), ("audit", "--no-chain"), ("demo",), ("operators", "review"), ("operators", "rate"),
           ("chain", "status"), ("chain", "reset", "--yes")]
CHAIN_READERS = [("audit",), ("operators", "rate"), ("chain", "status")]


def files_under(path: Path) -> set[Path]:
    return set(path.rglob("*"))


def refusal(capsys, monkeypatch, data_dir: Path, *argv: str) -> str:
    """Run ``adnet ARGV`` on ``data_dir``; assert it refused with one line and status 2; return the line."""
    for name in [name for name in os.environ if name.startswith("ADNET_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ADNET_DATA_DIR", str(data_dir))
    assert main(list(argv)) == 2, argv
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, (argv, lines)
    return lines[0]


def test_adnet_audit_without_a_data_directory_says_so_and_creates_nothing(tmp_path):
    environment = {name: value for name, value in os.environ.items() if not name.startswith("ADNET_")}
    adnet = Path(sys.executable).with_name("adnet")
    result = subprocess.run([str(adnet), "audit"], cwd=tmp_path, env=environment, capture_output=True,  # noqa: S603
                            text=True, timeout=120, check=False)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"adnet: configuration error: no adnet data in {tmp_path / 'var'} (its development secrets are missing): "
        "set ADNET_DATA_DIR to adnet's data directory, or create one with `adnet migrate`"]
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert files_under(tmp_path) == set()


@pytest.mark.parametrize("argv", READERS, ids=" ".join)
def test_a_command_that_reads_state_refuses_an_empty_data_directory(capsys, monkeypatch, tmp_path, argv):
    line = refusal(capsys, monkeypatch, tmp_path / "var", *argv)
    assert "no adnet data in" in line
    assert files_under(tmp_path) == set()


def test_a_data_directory_without_its_database_is_refused(capsys, monkeypatch, tmp_path):
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})  # the development secrets, as any earlier command made them
    before = files_under(tmp_path)
    for argv in READERS:
        assert refusal(capsys, monkeypatch, tmp_path, *argv).startswith(f"adnet: no database at {tmp_path}"), argv
    assert files_under(tmp_path) == before


def test_a_database_without_its_migrations_is_refused(capsys, monkeypatch, tmp_path):
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    sqlite3.connect(tmp_path / "adnet.sqlite3").close()  # a database file, empty
    before = files_under(tmp_path)
    for argv in READERS:
        line = refusal(capsys, monkeypatch, tmp_path, *argv)
        assert line.startswith("adnet: the database lacks ") and line.endswith(": run `adnet migrate`"), argv
    assert files_under(tmp_path) == before


def test_an_unreachable_database_is_named(capsys, monkeypatch, tmp_path):
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    monkeypatch.setenv("ADNET_DATABASE_URL", "postgres://adnet:nothing@127.0.0.1:1/adnet")
    for name in [name for name in os.environ if name.startswith("ADNET_") and name != "ADNET_DATABASE_URL"]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ADNET_DATA_DIR", str(tmp_path))
    assert main(["audit", "--no-chain"]) == 2
    assert capsys.readouterr().err.startswith("adnet: the database cannot be reached (")


def test_commands_that_read_the_chain_refuse_without_the_development_chain(capsys, monkeypatch, tmp_path):
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    migrated_sqlite(tmp_path / "adnet.sqlite3")
    before = files_under(tmp_path)
    for argv in CHAIN_READERS:
        line = refusal(capsys, monkeypatch, tmp_path, *argv)
        assert line.startswith(f"adnet: no development chain at {devserver.state_path(tmp_path)}"), argv
    assert files_under(tmp_path) == before
    assert main(["audit", "--no-chain"]) == 0  # the books alone need no chain
    assert "audit passed" in capsys.readouterr().out


def test_commands_that_read_the_chain_refuse_a_database_bound_to_none(capsys, monkeypatch, tmp_path):
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    migrated_sqlite(tmp_path / "adnet.sqlite3")
    devserver.state_path(tmp_path).touch()  # a chain's state, to which the database was never bound
    before = files_under(tmp_path)
    for argv in CHAIN_READERS:
        assert refusal(capsys, monkeypatch, tmp_path, *argv) == (
            "adnet: the database is bound to no chain yet: start adnet on it first (`adnet serve` or `adnet demo`)")
    assert files_under(tmp_path) == before


def test_a_sqlite_url_with_options_names_its_file(capsys, monkeypatch, tmp_path):
    """``?synchronous=FULL`` is an option of the database, not part of its file's name (the benchmark's URL)."""
    url = f"sqlite://{tmp_path / 'bench.sqlite3'}?synchronous=FULL"
    load_settings({"ADNET_DATA_DIR": str(tmp_path)})  # the development secrets, as any earlier command made them
    monkeypatch.setenv("ADNET_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("ADNET_DATABASE_URL", url)
    migrated_sqlite(tmp_path / "bench.sqlite3")
    assert main(["audit", "--no-chain"]) == 0
    assert "audit passed" in capsys.readouterr().out
