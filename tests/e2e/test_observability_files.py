"""deploy/observability/ holds to what the processes export: the alert rules parse as
Prometheus rule groups and the dashboard as Grafana JSON, and every metric their expressions
name is one a running system serves (scraped from all its processes), or Prometheus's own.

promtool is no PyPI wheel, so the expressions are checked by a PromQL tokenizer here (strings,
label matchers, ranges and grouping labels taken out; a name before `(` is a function); where
`promtool` is on PATH it checks the rules file too."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.api import System
from tests.e2e.observing import exported_names, metrics_urls, scrape

pytestmark = [pytest.mark.e2e]

HERE = Path(__file__).resolve().parents[2] / "deploy" / "observability"
ALERTS = HERE / "alerts.yaml"
DASHBOARD = HERE / "grafana-dashboard.json"
SCRAPES = HERE / "prometheus.yml"
#: Series Prometheus makes itself for every target.
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}
KEYWORDS = {
    "and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right",
    "bool", "offset", "inf", "nan",
}  # fmt: skip
DURATION = re.compile(r"^\d+(ms|s|m|h|d|w|y)$")


def metric_names(expression: str) -> set[str]:
    """The metric names a PromQL expression selects."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = re.sub(r"\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for found in re.finditer(r"(?<![\w.$])[A-Za-z_:][A-Za-z0-9_:]*", text):
        word, rest = found.group(), text[found.end() :].lstrip()
        if not rest.startswith("(") and word.lower() not in KEYWORDS:
            names.add(word)
    return names


def test_the_tokenizer_finds_the_metrics_of_an_expression() -> None:
    expression = (
        'histogram_quantile(0.99, sum by (job, le) (rate(a_bucket{x="y(z)",job=~"$job"}'
        "[$__rate_interval]))) / on(job) group_left b > 1e3 and c offset 5m"
    )
    assert metric_names(expression) == {"a_bucket", "b", "c"}


@pytest.fixture(scope="module")
def exported(system: System) -> set[str]:
    urls = metrics_urls(system.output)
    assert set(urls) == {"rules", "routes", "lobby", "gateway", "web", "notify"}
    names: set[str] = set()
    for process_urls in urls.values():
        for url in process_urls:
            names |= exported_names(scrape(url))
    return names | PROMETHEUS_OWN


def alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text())
    groups = document["groups"]
    assert groups and len({group["name"] for group in groups}) == len(groups)
    return [rule for group in groups for rule in group["rules"]]


def test_alert_rules_are_well_formed() -> None:
    rules = alert_rules()
    names = [rule["alert"] for rule in rules]
    assert len(set(names)) == len(names), "alert names repeat"
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert rule["expr"].strip() and rule["annotations"]["summary"], rule["alert"]
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}, rule["alert"]
        assert DURATION.match(str(rule.get("for", "0s"))), rule["alert"]
        assert rule["expr"].count("(") == rule["expr"].count(")"), rule["alert"]


def test_every_alert_names_only_metrics_we_export(exported: set[str]) -> None:
    for rule in alert_rules():
        names = metric_names(rule["expr"])
        assert names, rule["alert"]
        assert names <= exported, (rule["alert"], names - exported)


def dashboard_expressions() -> list[tuple[str, str]]:
    dashboard = json.loads(DASHBOARD.read_text())
    found = [
        (panel["title"], target["expr"])
        for panel in dashboard["panels"]
        for target in panel["targets"]
    ]
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":  # label_values(METRIC, label)
            (metric,) = re.findall(r"label_values\((\w+),", variable["definition"])
            found.append((f"variable {variable['name']}", metric))
    return found


def test_the_dashboard_shows_what_an_operator_runs_a_tournament_on(exported: set[str]) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    titles = " / ".join(panel["title"].lower() for panel in dashboard["panels"])
    for subject in ("calls/s", "error", "p50", "p99", "commands/s", "redis", "cache", "active "
                    "games", "watchers"):  # fmt: skip
        assert subject in titles, subject
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(set(ids)) == len(ids)
    for title, expression in dashboard_expressions():
        assert expression.count("(") == expression.count(")"), title
        names = metric_names(expression)
        assert names and names <= exported, (title, names - exported)


def test_the_example_scrape_configuration_loads_the_alerts() -> None:
    config = yaml.safe_load(SCRAPES.read_text())
    assert "alerts.yaml" in config["rule_files"]
    jobs = {job["job_name"] for job in config["scrape_configs"]}
    processes = ("rules", "routes", "lobby", "gateway", "web", "notify")
    assert jobs == {f"shikoku-{name}" for name in processes}


def test_promtool_accepts_the_rules_where_it_is_installed() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:  # not a PyPI wheel: the checks above stand in for it
        return
    checked = subprocess.run(
        [promtool, "check", "rules", str(ALERTS)], capture_output=True, text=True
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
