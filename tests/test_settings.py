"""Settings: read once per process, each declared once, the docs' table made from the
declarations, and no module but the reader looking at the environment."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gateway.rate_limit import Limits
from gateway.server import connection_options
from gateway.settings import GatewaySettings
from gateway.web.connections import ConnectionLimits
from gateway.web.settings import WebSettings
from infra.process_settings import Addresses, Listening
from infra.settings import SettingsError, declared, from_environment, load
from services.rules.shell.settings import RulesSettings
from tools import settings_table

ROOT = Path(__file__).parents[1]
TOKEN = {"SHIKOKU_INTERNAL_TOKEN": "the-secret"}

#: What operators' deployments set (deploy/compose.yaml, deploy/kubernetes): every name and
#: default, held here so that changing one is a decision, not an accident.
DEFAULTS = {
    "REDIS_URL": "redis://127.0.0.1:6379/0",
    "SHIKOKU_GATEWAY_ADDR": "127.0.0.1:50051",
    "SHIKOKU_LOBBY_ADDR": "127.0.0.1:50052",
    "SHIKOKU_RULES_ADDR": "127.0.0.1:50053",
    "SHIKOKU_ROUTES_ADDR": "127.0.0.1:50054",
    "SHIKOKU_WEB_ADDR": "127.0.0.1:8080",
    "SHIKOKU_<NAME>_LISTEN_ADDR": "",
    "SHIKOKU_<NAME>_METRICS_ADDR": "",
    "SHIKOKU_INTERNAL_TOKEN": "",
    "SHIKOKU_LOG_FORMAT": "",
    "SHIKOKU_LOG_LEVEL": "INFO",
    "SHIKOKU_ACCESS_LOG": True,
    "SHIKOKU_REDIS_WAIT_REPLICAS": 0,
    "SHIKOKU_REDIS_WAIT_MS": 1000,
    "SHIKOKU_REDIS_NO_REPLICA": "degrade",
    "SHIKOKU_RULES_CACHED_GAMES": 2000,
    "SHIKOKU_SUMMARY_SHARDS": 4,
    "SHIKOKU_ROUTES_WORKERS": None,
    "SHIKOKU_ROUTES_QUEUE": None,
    "SHIKOKU_RATE_PER_SECOND": 50.0,
    "SHIKOKU_RATE_BURST": 100,
    "SHIKOKU_TRUSTED_PROXIES": (),
    "SHIKOKU_STREAMS_PER_CALLER": 64,
    "SHIKOKU_GRANT_SECONDS": 5.0,
    "SHIKOKU_GRANT_FOLLOWED_SECONDS": 300.0,
    "SHIKOKU_GRANTS_KEPT": 100_000,
    "SHIKOKU_UNKNOWN_CREDENTIAL_SECONDS": 5.0,
    "SHIKOKU_UNKNOWN_CREDENTIALS_KEPT": 10_000,
    "SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS": 120.0,
    "SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS": 10.0,
    "SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS": 4000,
    "SHIKOKU_GATEWAY_KEEPALIVE_MIN_PING_SECONDS": 10.0,
    "SHIKOKU_WEB_ORIGINS": ("*",),
    "SHIKOKU_WEB_HEADER_TIMEOUT_SECONDS": 10.0,
    "SHIKOKU_WEB_BODY_TIMEOUT_SECONDS": 30.0,
    "SHIKOKU_WEB_KEEP_ALIVE_SECONDS": 30,
    "SHIKOKU_WEB_MAX_CONNECTIONS_PER_ADDRESS": 256,
    "SHIKOKU_WEB_MAX_CONNECTIONS": 20_000,
    "SHIKOKU_WEB_MAX_REQUESTS_IN_FLIGHT": 2000,
    "SHIKOKU_WEBHOOK_ALLOW_LOOPBACK": False,
    "SHIKOKU_NOTIFY_ADDR": "127.0.0.1:50055",
    "SHIKOKU_PUBLIC_URL": "http://127.0.0.1:8080",
    "SHIKOKU_NOTIFY_FIRST_RETRY_SECONDS": 2.0,
    "SHIKOKU_NOTIFY_ATTEMPTS": 10,
}
#: Variables the docs name that no server process reads: the test harness's and clients'.
NOT_OF_A_PROCESS = {"SHIKOKU_MASTER_DOWN_SECONDS", "SHIKOKU_API_KEY"}
#: The one module that reads the environment, for every process (its `main`, through it).
READER = ROOT / "infra" / "settings.py"
READS_ENVIRONMENT = re.compile(r"\bos\.environ\b|\bgetenv\b|\bfrom os import\b.*\benviron\b")


def test_every_variable_keeps_its_name_and_default() -> None:
    found = {
        variable: one.default for variable, (one, _) in settings_table.settings_by_process().items()
    }
    ours = {name: default for name, default in found.items() if not name.startswith("OTEL_")}
    assert ours == DEFAULTS


def test_the_docs_table_is_the_one_the_declarations_make() -> None:
    document = (ROOT / "docs" / "operations.md").read_text()
    assert settings_table.with_table(document) == document, (
        "docs/operations.md's settings table is stale: python -m tools.settings_table"
    )
    table = document.partition(settings_table.BEGIN)[2].partition(settings_table.END)[0]
    for variable, (one, _) in settings_table.settings_by_process().items():
        (row,) = [line for line in table.splitlines() if line.startswith(f"| `{variable}` |")]
        assert one.shown_default in row


def test_every_variable_the_docs_name_is_declared() -> None:
    document = (ROOT / "docs" / "operations.md").read_text()
    named = set(re.findall(r"\bSHIKOKU_[A-Z0-9_<>]*[A-Z0-9>]\b|\bREDIS_URL\b", document))
    known = set(NOT_OF_A_PROCESS)
    for variable, (one, processes) in settings_table.settings_by_process().items():
        known |= {variable, *(one.named(process) for process in processes)}
        if variable.endswith("_ADDR") and variable.count("_") == 2:
            known.add("SHIKOKU_<NAME>_ADDR")  # each service's own, said at once
    assert named - known == set()


def test_no_module_but_the_settings_reader_reads_the_environment() -> None:
    readers = [
        str(path.relative_to(ROOT))
        for package in ("services", "gateway", "infra")
        for path in (ROOT / package).rglob("*.py")
        if path != READER and READS_ENVIRONMENT.search(path.read_text())
    ]
    assert readers == []


def test_the_check_finds_a_module_that_reads_the_environment() -> None:
    assert READS_ENVIRONMENT.search('x = os.environ.get("SHIKOKU_X", "1")')
    assert READS_ENVIRONMENT.search("from os import getenv")
    assert READS_ENVIRONMENT.search("from os import environ as env")
    assert not READS_ENVIRONMENT.search("settings.process.environment")


def test_values_are_read_as_their_kinds_and_an_empty_one_is_the_default() -> None:
    settings = load(
        GatewaySettings,
        {
            "SHIKOKU_RATE_PER_SECOND": "2.5",
            "SHIKOKU_RATE_BURST": " 7 ",
            "SHIKOKU_TRUSTED_PROXIES": "10.0.0.1, 10.0.0.2,",
            "SHIKOKU_GRANT_SECONDS": "0",
            "SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS": "",
            "SHIKOKU_ACCESS_LOG": "off",
            "SHIKOKU_LOG_FORMAT": "JSON",
            "SHIKOKU_GATEWAY_METRICS_ADDR": "0.0.0.0:9100",
            "SHIKOKU_RULES_METRICS_ADDR": "0.0.0.0:9999",  # another process's
            **TOKEN,
        },
        "gateway",
    )
    assert settings.limits == Limits(2.5, 7, frozenset({"10.0.0.1", "10.0.0.2"}), "the-secret")
    assert settings.grant_seconds == 0.0
    assert settings.max_concurrent_streams == 4000
    observability = settings.process.observability
    assert (observability.access_log, observability.log_format) == (False, "json")
    assert observability.metrics == "0.0.0.0:9100"


def test_every_bad_value_is_one_line_naming_it_and_what_it_expects() -> None:
    with pytest.raises(SettingsError) as refused:
        load(
            GatewaySettings,
            {
                "SHIKOKU_GRANT_SECONDS": "abc",
                "SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS": "0",
                "SHIKOKU_GRANTS_KEPT": "1e5",
                "SHIKOKU_LOG_LEVEL": "chatty",
                "SHIKOKU_ACCESS_LOG": "sometimes",
                "SHIKOKU_GATEWAY_METRICS_ADDR": "9100",
                "REDIS_URL": "localhost:6379",
                "SHIKOKU_RATE_PER_SECOND": "nan",
            },
            "gateway",
        )
    assert refused.value.problems == [
        "SHIKOKU_LOG_LEVEL: expected one of DEBUG, INFO, WARNING, ERROR, CRITICAL, got 'chatty'",
        "SHIKOKU_ACCESS_LOG: expected 1 or 0 (or true/false, on/off, yes/no), got 'sometimes'",
        "SHIKOKU_GATEWAY_METRICS_ADDR: expected host:port, got '9100'",
        "REDIS_URL: expected a redis://, rediss://, unix://, redis+cluster:// or "
        "rediss+cluster:// URL, got 'localhost:6379'",
        "SHIKOKU_RATE_PER_SECOND: expected a number, at least 0, got 'nan'",
        "SHIKOKU_GRANT_SECONDS: expected a number of seconds, 0 or more, got 'abc'",
        "SHIKOKU_GRANTS_KEPT: expected a whole number, at least 1, got '1e5'",
        "SHIKOKU_GATEWAY_HANDSHAKE_TIMEOUT_SECONDS: expected a number of seconds above 0, got '0'",
    ]


def test_settings_that_go_together_are_checked_together() -> None:
    with pytest.raises(SettingsError) as refused:
        load(RulesSettings, {"SHIKOKU_RULES_ADDR": "dns:///rules:50053"}, "rules")
    assert refused.value.problems == [
        "SHIKOKU_INTERNAL_TOKEN: not set (the secret every process of this deployment shares; "
        "shikoku run makes one)",
        "SHIKOKU_RULES_ADDR names several replicas (dns:///rules:50053); set "
        "SHIKOKU_RULES_LISTEN_ADDR to this replica's own address",
    ]
    rules = load(
        RulesSettings,
        {"SHIKOKU_RULES_ADDR": "dns:///rules:50053", "SHIKOKU_RULES_LISTEN_ADDR": "[::]:50053"}
        | TOKEN,
        "rules",
    )
    assert rules.listen_address == "[::]:50053"
    with pytest.raises(SettingsError, match="SHIKOKU_RATE_BURST: expected at least 1 while"):
        load(GatewaySettings, {"SHIKOKU_RATE_BURST": "0"}, "gateway")
    off = {"SHIKOKU_RATE_BURST": "0", "SHIKOKU_RATE_PER_SECOND": "0"}
    assert not load(GatewaySettings, off, "gateway").limits.enabled


def test_a_process_s_own_variables_need_the_process() -> None:
    assert load(Listening, {"SHIKOKU_LOBBY_LISTEN_ADDR": "0.0.0.0:1"}, "lobby").own == "0.0.0.0:1"
    with pytest.raises(ValueError, match="a process's own"):
        load(Listening, {})
    assert [one.variable for one in declared(Listening)] == ["SHIKOKU_<NAME>_LISTEN_ADDR"]


def test_a_process_with_a_bad_setting_stops_at_once_with_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SHIKOKU_WEB_KEEP_ALIVE_SECONDS", "soon")
    monkeypatch.setenv("SHIKOKU_WEB_ORIGINS", "https://a.example/, https://b.example")
    with pytest.raises(SystemExit) as stopped:
        from_environment(WebSettings, "web")
    assert stopped.value.code == 2
    assert capsys.readouterr().err == (
        "web: SHIKOKU_WEB_KEEP_ALIVE_SECONDS: expected a whole number, at least 1, got 'soon'\n"
    )
    monkeypatch.delenv("SHIKOKU_WEB_KEEP_ALIVE_SECONDS")
    web = from_environment(WebSettings, "web")
    assert web.allowed_origins == ("https://a.example", "https://b.example")
    assert web.connection_limits == ConnectionLimits()


def test_a_command_reads_the_addresses_the_same_way(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIKOKU_GATEWAY_ADDR", "gateway.example:443")
    assert Addresses.from_env().gateway == "gateway.example:443"
    monkeypatch.setenv("SHIKOKU_WEB_ADDR", "8080")
    with pytest.raises(SystemExit) as stopped:
        Addresses.from_env()
    assert stopped.value.code == 2


def test_the_gateway_s_connections_are_bounded_as_set() -> None:
    settings = load(
        GatewaySettings,
        {
            "SHIKOKU_GATEWAY_MAX_CONNECTION_IDLE_SECONDS": "0.5",
            "SHIKOKU_GATEWAY_MAX_CONCURRENT_STREAMS": "9",
        },
        "gateway",
    )
    options: dict[str, Any] = dict(connection_options(settings))
    assert options["grpc.max_connection_idle_ms"] == 500
    assert options["grpc.server_handshake_timeout_ms"] == 10_000
    assert options["grpc.max_concurrent_streams"] == 9
    assert options["grpc.http2.min_ping_interval_without_data_ms"] == 10_000


@pytest.mark.parametrize(
    ("module", "variable", "value", "line"),
    [
        (
            "services.routes.shell.server",
            "SHIKOKU_ROUTES_WORKERS",
            "two",
            "routes: SHIKOKU_ROUTES_WORKERS: expected a whole number, at least 1, got 'two'",
        ),
        (
            "gateway.web.server",
            "SHIKOKU_WEB_MAX_CONNECTIONS",
            "-1",
            "web: SHIKOKU_WEB_MAX_CONNECTIONS: expected a whole number, at least 0, got '-1'",
        ),
    ],
)
def test_a_real_process_says_which_setting_is_bad_and_exits_2(
    module: str, variable: str, value: str, line: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", module],
        env={"PATH": "/usr/bin:/bin", variable: value, **TOKEN},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr.strip(), done.stdout) == (2, line, "")
