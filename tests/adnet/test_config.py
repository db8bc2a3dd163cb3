"""Settings: development works with nothing set; production refuses anything a development machine would use."""

from __future__ import annotations

import base64
import json
import random
import re
import stat
from decimal import Decimal
from pathlib import Path

import pytest
from eth_account import Account

from adnet.config import (
    DEV_SECRETS_FILE,
    ChainSettings,
    ConfigError,
    RateLimit,
    SecretSettings,
    Settings,
    is_development_secret,
    load_settings,
    secret_weakness,
    variable,
)
from adnet.core.wallets import dev_accounts

ROOT = Path(__file__).resolve().parents[2]

# Random values, as production's must be (``secret_weakness``).
SECRET_KEY = "nBw9RaiqNIFJopiu21ZAPWawng4_aaHhHFXCWjGWEThcCzaI"
TRACKING_SECRET = "W_SZBcHF-DIABh98Oel3L4-LorMYMOV2Al44Kj8boqaMcU8Z"
SIGNER_KEY = "0x3f707d3fc22b999ca1c462474e40371c94ac19e8eb9306151ae19aab7ebb653a"
METRICS_TOKEN = "6lLcZccPQJ-w3EVGUFsCN7sTtjWoOMcIyEn-JYlRN89gxc2V"


def production_env(tmp_path, **overrides: str) -> dict[str, str]:
    env = {
        "ADNET_ENV": "production",
        "ADNET_DATA_DIR": str(tmp_path),
        "ADNET_PUBLIC_URL": "https://ads.example",
        "ADNET_SECRET_KEY": SECRET_KEY,
        "ADNET_TRACKING_SECRET": TRACKING_SECRET,
        "ADNET_SIGNER_KEY": SIGNER_KEY,
        "ADNET_CHAIN_RPC_URL": "https://forno.celo.org",
        "ADNET_VAULT_ADDRESS": "0x" + "11" * 20,
        "ADNET_GS_TOKEN_ADDRESS": "0x" + "22" * 20,
        "ADNET_SOV_TOKEN_ADDRESS": "0x" + "33" * 20,
        "ADNET_DATABASE_URL": "postgres://adnet@db.internal/adnet",
    }
    env.update(overrides)
    return {name: value for name, value in env.items() if value}


def test_development_needs_no_configuration(tmp_path):
    settings = load_settings({"ADNET_DATA_DIR": str(tmp_path)})

    assert settings.env == "development"
    assert settings.embedded_chain
    assert settings.public_url == "http://127.0.0.1:8000"
    assert settings.database_url == f"sqlite://{tmp_path / 'adnet.sqlite3'}"
    assert settings.publisher_share_bps == 7000
    assert settings.claim_deadline_seconds == 7 * 24 * 3600
    secrets_file = tmp_path / DEV_SECRETS_FILE
    assert stat.S_IMODE(secrets_file.stat().st_mode) == 0o600
    stored = json.loads(secrets_file.read_text())
    assert stored["secret_key"] == settings.secret_key and stored["signer_key"] == settings.signer_key
    assert settings.generated_secrets == {"ADNET_SECRET_KEY", "ADNET_TRACKING_SECRET", "ADNET_SIGNER_KEY"}
    assert not settings.secure_cookies  # development serves plain http://127.0.0.1


@pytest.mark.parametrize(("host", "port", "public_url"), [
    ("127.0.0.1", "8130", "http://127.0.0.1:8130"), ("localhost", "9000", "http://localhost:9000"),
    ("::1", "8000", "http://[::1]:8000")])
def test_the_public_url_is_the_address_served_unless_one_is_set(tmp_path, host, port, public_url):
    served = {"ADNET_DATA_DIR": str(tmp_path), "ADNET_HOST": host, "ADNET_PORT": port}
    assert load_settings(served).public_url == public_url
    assert load_settings({**served, "ADNET_PUBLIC_URL": "https://ads.example/"}).public_url == "https://ads.example"


def test_generated_secrets_stay_the_same_across_starts(tmp_path):
    first = load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    second = load_settings({"ADNET_DATA_DIR": str(tmp_path)})

    assert (first.secret_key, first.tracking_secret, first.signer_key) == (
        second.secret_key, second.tracking_secret, second.signer_key)


def test_a_complete_production_configuration_starts(tmp_path):
    settings = load_settings(production_env(tmp_path))

    assert settings.production and not settings.embedded_chain and settings.secure_cookies
    assert settings.generated_secrets == frozenset()
    assert not (tmp_path / DEV_SECRETS_FILE).exists()


@pytest.mark.parametrize("variable", [
    "ADNET_SECRET_KEY", "ADNET_TRACKING_SECRET", "ADNET_SIGNER_KEY", "ADNET_CHAIN_RPC_URL", "ADNET_VAULT_ADDRESS",
    "ADNET_GS_TOKEN_ADDRESS", "ADNET_SOV_TOKEN_ADDRESS",
])
def test_production_names_the_missing_variable(tmp_path, variable):
    with pytest.raises(ConfigError, match=variable):
        load_settings(production_env(tmp_path, **{variable: ""}))
    assert not (tmp_path / DEV_SECRETS_FILE).exists()


def test_production_refuses_the_secrets_development_generated(tmp_path):
    development = load_settings({"ADNET_DATA_DIR": str(tmp_path)})

    with pytest.raises(ConfigError, match="ADNET_TRACKING_SECRET is a development secret"):
        load_settings(production_env(tmp_path, ADNET_TRACKING_SECRET=development.tracking_secret))
    with pytest.raises(ConfigError, match="ADNET_SIGNER_KEY is a development secret"):
        load_settings(production_env(tmp_path, ADNET_SIGNER_KEY=development.signer_key))


@pytest.mark.parametrize("variable", ["ADNET_SECRET_KEY", "ADNET_TRACKING_SECRET", "ADNET_SIGNER_KEY",
                                      "ADNET_TRACKING_SECRET_PREVIOUS", "ADNET_METRICS_TOKEN"])
def test_production_refuses_development_secrets_copied_from_another_data_directory(tmp_path, variable):
    """The secrets of a development data directory, set in production's environment on another one: each is
    recognised by its development tag, in whichever variable it turns up."""
    development = load_settings({"ADNET_DATA_DIR": str(tmp_path / "development")})
    generated = {"ADNET_SECRET_KEY": development.secret_key, "ADNET_TRACKING_SECRET": development.tracking_secret,
                 "ADNET_SIGNER_KEY": development.signer_key}
    copied = generated.get(variable, development.tracking_secret)

    with pytest.raises(ConfigError, match=f"^{variable} is a development secret"):
        load_settings(production_env(tmp_path / "production", **{variable: copied}))
    assert not (tmp_path / "production" / DEV_SECRETS_FILE).exists()


def test_a_development_signer_key_is_recognised_in_any_spelling(tmp_path):
    key = load_settings({"ADNET_DATA_DIR": str(tmp_path / "development")}).signer_key

    for spelling in (key.upper().replace("0X", "0x"), key.removeprefix("0x")):
        with pytest.raises(ConfigError, match="ADNET_SIGNER_KEY is a development secret"):
            load_settings(production_env(tmp_path / "production", ADNET_SIGNER_KEY=spelling))


def test_random_secrets_are_not_taken_for_development_ones():
    generator = random.Random(7)
    texts = [base64.urlsafe_b64encode(generator.randbytes(36)).decode() for _ in range(2000)]
    keys = ["0x" + generator.randbytes(32).hex() for _ in range(2000)]

    assert not any(is_development_secret(value) for value in texts + keys)
    assert not is_development_secret("ünïcode-secret-" + "x" * 40)


def test_production_refuses_a_public_development_account_key(tmp_path):
    with pytest.raises(ConfigError, match="well-known development account"):
        load_settings(production_env(tmp_path, ADNET_SIGNER_KEY=dev_accounts()[0].key.to_0x_hex()))


@pytest.mark.parametrize(("variable", "value", "message"), [
    ("ADNET_PUBLIC_URL", "http://ads.example", "https"),
    ("ADNET_SECRET_KEY", "short", "at least 32 characters"),
    ("ADNET_SIGNER_KEY", "0x1234", "32-byte hex private key"),
    ("ADNET_ENV", "staging", "ADNET_ENV must be one of"),
    ("ADNET_PORT", "80000", "ADNET_PORT must be between"),
    ("ADNET_PUBLISHER_SHARE_BPS", "12000", "ADNET_PUBLISHER_SHARE_BPS must be between"),
    ("ADNET_DATABASE_URL", "mysql://db/adnet", "sqlite:// or postgres://"),
    ("ADNET_VAULT_ADDRESS", "0xnothex", "ADNET_VAULT_ADDRESS"),
    ("ADNET_RATE_LIMIT_PUBLIC", "lots", "ADNET_RATE_LIMIT_PUBLIC"),
    ("ADNET_REDIS_URL", "127.0.0.1:6379", "ADNET_REDIS_URL must be a redis://"),
    ("ADNET_GEOIP_DATABASE", "/nonexistent/GeoLite2-City.mmdb", "ADNET_GEOIP_DATABASE names no file"),
    ("ADNET_CLAIM_DEADLINE_SECONDS", "60", "^ADNET_CLAIM_DEADLINE_SECONDS must be at least 300, got 60$"),
    ("ADNET_TRUSTED_PROXIES", "two", "^ADNET_TRUSTED_PROXIES must be an integer, got 'two'$"),
    ("ADNET_OPERATORS", "0x" + "44" * 20 + ",0xnothex", "^ADNET_OPERATORS: "),
    ("ADNET_CAP_SITE_IMPRESSIONS", "0/300", "^ADNET_CAP_SITE_IMPRESSIONS must have a positive count and period"),
])
def test_invalid_values_are_named(tmp_path, variable, value, message):
    with pytest.raises(ConfigError, match=message):
        load_settings(production_env(tmp_path, **{variable: value}))


def test_site_checks_have_a_daily_default_and_a_development_only_port(tmp_path):
    development = load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    assert (development.site_recheck_hours, development.site_check_port) == (24, None)
    local = load_settings({"ADNET_DATA_DIR": str(tmp_path), "ADNET_SITE_CHECK_PORT": "3000",
                           "ADNET_SITE_RECHECK_HOURS": "6"})
    assert (local.site_recheck_hours, local.site_check_port) == (6, 3000)
    assert load_settings(production_env(tmp_path, ADNET_SITE_RECHECK_HOURS="48")).site_recheck_hours == 48
    with pytest.raises(ConfigError, match="ADNET_SITE_CHECK_PORT is for development only"):
        load_settings(production_env(tmp_path, ADNET_SITE_CHECK_PORT="8443"))
    with pytest.raises(ConfigError, match="ADNET_SITE_RECHECK_HOURS must be between"):
        load_settings(production_env(tmp_path, ADNET_SITE_RECHECK_HOURS="0"))


def test_location_needs_a_geoip_file_or_names_the_proxys_country_header(tmp_path):
    development = load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    assert (development.geoip_database, development.country_header) == (None, "CF-IPCountry")
    database = tmp_path / "GeoLite2-Country.mmdb"
    database.write_bytes(b"")
    located = load_settings(production_env(tmp_path, ADNET_GEOIP_DATABASE=str(database),
                                           ADNET_COUNTRY_HEADER="X-Country"))
    assert (located.geoip_database, located.country_header) == (database, "X-Country")


def test_redis_is_optional_and_named_by_a_url(tmp_path):
    assert load_settings({"ADNET_DATA_DIR": str(tmp_path)}).redis_url is None
    shared = load_settings(production_env(tmp_path, ADNET_REDIS_URL="redis://10.0.0.5:6379/2"))
    assert shared.redis_url == "redis://10.0.0.5:6379/2"


def test_the_metrics_token_is_optional_and_long_in_production(tmp_path):
    assert load_settings(production_env(tmp_path)).metrics_token is None
    assert load_settings(production_env(tmp_path, ADNET_METRICS_TOKEN=METRICS_TOKEN)).metrics_token == METRICS_TOKEN
    assert load_settings({"ADNET_DATA_DIR": str(tmp_path), "ADNET_METRICS_TOKEN": "short"}).metrics_token == "short"
    with pytest.raises(ConfigError, match="ADNET_METRICS_TOKEN must be at least 32 characters"):
        load_settings(production_env(tmp_path, ADNET_METRICS_TOKEN="short"))


@pytest.mark.parametrize("variable", ["ADNET_SECRET_KEY", "ADNET_TRACKING_SECRET", "ADNET_TRACKING_SECRET_PREVIOUS",
                                      "ADNET_METRICS_TOKEN"])
@pytest.mark.parametrize(("value", "weakness"), [
    ("a" * 32, "repeats characters"),
    ("k" * 48, "repeats characters"),
    ("password" * 4, "repeats characters"),
    ("Password123" * 3, "repeats characters"),
    ("0123456789abcdef" * 2, "repeats characters"),
    ("abcdefghijklmnopqrstuvwxyz012345", "runs of neighbouring characters"),
    ("aaaaaaaaaabbbbbbbbbbccccccccccdd", "runs of neighbouring characters"),
    ("aaaiaiimeemaieememeemiamaiiiemma", "too little entropy"),
    (SECRET_KEY[:31], "at least 32 characters"),
])
def test_production_refuses_a_weak_secret_and_names_it(tmp_path, variable, value, weakness):
    with pytest.raises(ConfigError, match=f"^{variable} .*{weakness}"):
        load_settings(production_env(tmp_path, **{variable: value}))


def test_production_refuses_a_signer_key_of_repeated_digits(tmp_path):
    with pytest.raises(ConfigError, match=r"^ADNET_SIGNER_KEY repeats characters"):
        load_settings(production_env(tmp_path, ADNET_SIGNER_KEY="0x" + "5a" * 32))


@pytest.mark.parametrize(("first", "second", "value"), [
    ("ADNET_SECRET_KEY", "ADNET_TRACKING_SECRET", TRACKING_SECRET),
    ("ADNET_TRACKING_SECRET", "ADNET_TRACKING_SECRET_PREVIOUS", TRACKING_SECRET),
    ("ADNET_SECRET_KEY", "ADNET_METRICS_TOKEN", SECRET_KEY),
    ("ADNET_SIGNER_KEY", "ADNET_METRICS_TOKEN", SIGNER_KEY.upper().replace("0X", "0x")),
])
def test_production_refuses_one_value_for_two_secrets(tmp_path, first, second, value):
    with pytest.raises(ConfigError, match=f"^{second} repeats the value of {first};"):
        load_settings(production_env(tmp_path, **{first: value, second: value}))


def test_random_secrets_of_the_length_asked_for_are_strong_enough():
    rng = random.Random(20)
    generated = [base64.urlsafe_b64encode(rng.randbytes(24)).decode() for _ in range(2000)]
    generated += [rng.randbytes(32).hex() for _ in range(2000)]
    assert [value for value in generated if secret_weakness(value) is not None] == []
    assert secret_weakness(SECRET_KEY) is None and secret_weakness("correct horse battery staple 123") is None


def test_development_takes_any_secret(tmp_path):
    settings = load_settings({"ADNET_DATA_DIR": str(tmp_path), "ADNET_SECRET_KEY": "a" * 32,
                              "ADNET_TRACKING_SECRET": "a" * 32})
    assert settings.secret_key == settings.tracking_secret == "a" * 32


def test_values_are_trimmed_and_lists_split(tmp_path):
    operators = ["0x" + "44" * 20, "0x" + "55" * 20]
    settings = load_settings(production_env(tmp_path, ADNET_PORT=" 8443 ", ADNET_OPERATORS=" , ".join(operators),
                                            ADNET_RATE_LIMIT_AUTH="10/30", ADNET_TRACKING_SECRET_PREVIOUS="  "))
    assert (settings.port, settings.operators, settings.rate_limit_auth) == (8443, tuple(operators), RateLimit(10, 30))
    assert settings.tracking_secret_previous is None
    assert settings.chain_confirmations == 1  # on a node, unless set
    assert load_settings(production_env(tmp_path, ADNET_CHAIN_CONFIRMATIONS="0")).chain_confirmations == 0


def test_each_concern_reads_the_process_environment_with_its_own_rules(tmp_path, monkeypatch):
    """A concern is a pydantic-settings class of its own: read from the environment, its production rules refuse
    in the same words as ``load_settings``."""
    for name, value in production_env(tmp_path, ADNET_CHAIN_RPC_URL="").items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match="production needs ADNET_CHAIN_RPC_URL"):
        ChainSettings()
    assert SecretSettings().signer_address == Account.from_key(SIGNER_KEY).address.lower()
    monkeypatch.setenv("ADNET_SECRET_KEY", "short")
    with pytest.raises(ValueError, match="ADNET_SECRET_KEY must be at least 32 characters"):
        SecretSettings()


# docs/configuration.md's table: a row `ADNET_X` | default | meaning, or several variables and as many defaults.
DOCUMENTED_ROW = re.compile(r"^\| (`ADNET_[^|]*) \| ([^|]*) \|", re.M)


def documented_defaults() -> dict[str, str | None]:
    """Each variable of docs/configuration.md's table and the default it gives: the first `value` of its cell (the
    n-th of n for a row of n variables); None where the cell gives none ("none", "generated in development")."""
    table: dict[str, str | None] = {}
    for names, default in DOCUMENTED_ROW.findall((ROOT / "docs" / "configuration.md").read_text()):
        variables = re.findall(r"`(ADNET_\w+)`", names)
        values = re.findall(r"`([^`]+)`", default)
        for index, name in enumerate(variables):
            table[name] = values[index if len(variables) > 1 else 0] if values else None
    return table


def as_written(value: object, where: Path) -> str | None:
    """A setting's value as its variable would be written; None for none. Paths in ``where`` are relative."""
    if value is None or value == ():
        return None
    text = str(value)
    return text.replace(f"{where}/", "") if isinstance(value, str) else (
        "./" + str(Path(text).relative_to(where)) if isinstance(value, Path) else text)


def test_docs_configuration_lists_every_variable_with_its_default(tmp_path, monkeypatch):
    """Every field of ``Settings`` has its row, every row names a field, and each row's default is what adnet
    starts with when nothing is set (in a working directory of its own: ``./var``)."""
    monkeypatch.chdir(tmp_path)
    settings = load_settings({})
    documented = documented_defaults()

    assert len(documented) > 30
    assert sorted(documented) == sorted(variable(name) for name in Settings.model_fields)
    started = {variable(name): None if variable(name) in settings.generated_secrets
               else as_written(getattr(settings, name), tmp_path) for name in Settings.model_fields}
    assert documented == started


def test_bids_are_in_gs_unless_a_currency_and_its_rate_are_set(tmp_path):
    development = load_settings({"ADNET_DATA_DIR": str(tmp_path)})
    assert (development.bid_currency, development.bid_currency_rate) == ("G$", None)
    usd = load_settings(production_env(tmp_path, ADNET_BID_CURRENCY="USD", ADNET_BID_CURRENCY_RATE="0.0125"))
    assert (usd.bid_currency, usd.bid_currency_rate) == ("USD", Decimal("0.0125"))
    for values, message in (({"ADNET_BID_CURRENCY": "USD"}, "ADNET_BID_CURRENCY USD needs ADNET_BID_CURRENCY_RATE"),
                            ({"ADNET_BID_CURRENCY": "dollars"}, "ADNET_BID_CURRENCY must be G\\$ or an ISO 4217"),
                            ({"ADNET_BID_CURRENCY": "EUR", "ADNET_BID_CURRENCY_RATE": "0"},
                             "ADNET_BID_CURRENCY_RATE must be a positive number"),
                            ({"ADNET_BID_CURRENCY": "EUR", "ADNET_BID_CURRENCY_RATE": "lots"},
                             "ADNET_BID_CURRENCY_RATE")):
        with pytest.raises(ConfigError, match=message):
            load_settings(production_env(tmp_path, **values))
