"""Reading what a running system shows its operator: the `/metrics` of each process (whose
addresses `shikoku run` prints), and the JSON lines of its logs."""

from __future__ import annotations

import json
import re
import urllib.request
from collections import defaultdict
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

METRICS_LINE = re.compile(r"^(\w+) metrics on (http://\S+/metrics)$")
#: What each metric type's samples are named, after the family's name.
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("", "_sum", "_count"),
    "gauge": ("",),
    "info": ("_info",),
    "untyped": ("",),
}


def metrics_urls(output: list[str]) -> dict[str, list[str]]:
    """Each process's /metrics URLs (one per replica), from `shikoku run`'s lines."""
    urls: dict[str, list[str]] = defaultdict(list)
    for line in output:
        if found := METRICS_LINE.match(line.strip()):
            urls[found.group(1)].append(found.group(2))
    return dict(urls)


def scrape(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as answer:
        body: bytes = answer.read()
    return body.decode()


def samples(text: str) -> list[Sample]:
    return [sample for family in text_string_to_metric_families(text) for sample in family.samples]


def total(text: str, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels`."""
    return sum(
        sample.value
        for sample in samples(text)
        if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items())
    )


def exported_names(text: str) -> set[str]:
    """Every series name the exposition declares, samples or not (a labelled metric that has
    counted nothing yet still has its TYPE line)."""
    names = set()
    for family in text_string_to_metric_families(text):
        names |= {family.name + suffix for suffix in SUFFIXES.get(family.type, ("",))}
        names |= {sample.name for sample in family.samples}
    return names


def json_lines(output: list[str]) -> list[dict[str, Any]]:
    """The log lines of the output that are JSON objects, parsed."""
    found = []
    for line in output:
        if line.startswith("{"):
            found.append(json.loads(line))
    return found


def access_lines(output: list[str]) -> list[dict[str, Any]]:
    return [line for line in json_lines(output) if line.get("logger") == "shikoku.access"]
