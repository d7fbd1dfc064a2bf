"""deploy/: the alert rules and Prometheus's configuration pass promtool (and the rules'
unit tests), and every metric the rules and the Grafana dashboard read is one the app
exports, with the label values it exports."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from marketplace.metrics.collector import HOOK_METRIC_NAMES

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = ROOT / "deploy" / "prometheus"
GRAFANA = ROOT / "deploy" / "grafana"
ALERTS = yaml.safe_load((PROMETHEUS / "alerts.yml").read_text())
DASHBOARD = json.loads((GRAFANA / "dashboard.json").read_text())
RULES = [rule for group in ALERTS["groups"] for rule in group["rules"]]
SEVERITIES = {"critical", "warning", "info"}


def _promtool() -> str:
    found = shutil.which("promtool")
    if found:
        return found
    # CI (.ci/run installs it, and runs with REQUIRE_SERVICES=1) must not skip this.
    if os.environ.get("CI") == "true" or os.environ.get("REQUIRE_SERVICES") == "1":
        pytest.fail("promtool is missing: .ci/run installs Debian's prometheus package")
    pytest.skip("promtool is missing (apt-get install -y prometheus); CI runs this test")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [_promtool(), *args], cwd=PROMETHEUS, capture_output=True, text=True, timeout=120
    )


def test_promtool_accepts_the_alert_rules() -> None:
    result = _run("check", "rules", "alerts.yml")
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(RULES)} rules found" in result.stdout


def test_the_alert_rules_pass_their_unit_tests() -> None:
    result = _run("test", "rules", "alerts_test.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_accepts_the_prometheus_configuration() -> None:
    # --syntax-only: the token file exists only inside the container (a compose secret).
    result = _run("check", "config", "--syntax-only", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("rule", RULES, ids=[rule["alert"] for rule in RULES])
def test_every_alert_has_a_duration_a_severity_and_words_for_a_person(rule: dict) -> None:
    assert rule.get("for"), "an alert without for: pages on one bad scrape"
    assert rule["labels"]["severity"] in SEVERITIES
    assert rule["annotations"]["summary"].strip()
    assert rule["annotations"]["description"].strip()


# --- every name and label value read is exported ----------------------------------------

NAME = re.compile(r"\b(marketplace_[a-z0-9_]+)(\{[^}]*\})?")
EQUALS = re.compile(r'(\w+)\s*=\s*"([^"]*)"')


def _dashboard_exprs() -> list[str]:
    return [target["expr"] for panel in DASHBOARD["panels"] for target in panel.get("targets", [])]


def _exported() -> dict[str, dict[str, set[str]]]:
    """Family and sample name -> label -> the values the app exports. An empty database is
    enough: every family is there, its series at 0 (the platform calls' family, whose
    series are the statuses seen, has none)."""
    from marketplace.metrics.views import exposition

    exported: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for family in text_string_to_metric_families(exposition().decode()):
        exported[family.name]  # a family with no series yet (no recent platform call)
        for sample in family.samples:
            labels = exported[sample.name]
            for label, value in sample.labels.items():
                labels[label].add(value)
    return exported


@pytest.mark.django_db
@pytest.mark.parametrize("source", ["alerts.yml", "dashboard.json"])
def test_every_metric_read_is_one_the_app_exports(source: str) -> None:
    exprs = [rule["expr"] for rule in RULES] if source == "alerts.yml" else _dashboard_exprs()
    exported = _exported()
    read: set[str] = set()
    problems = []
    for expr in exprs:
        for name, selector in NAME.findall(expr):
            read.add(name)
            if name in HOOK_METRIC_NAMES:
                continue  # reported once the hook returns something (readings.py)
            if name not in exported:
                problems.append(f"{name} is not exported (in {expr!r})")
                continue
            for label, value in EQUALS.findall(selector or ""):
                if value not in exported[name].get(label, set()):
                    problems.append(f'{name}{{{label}="{value}"}} matches no series')
    assert not problems, "\n".join(problems)
    assert read, f"no metric read in {source}"


def test_the_dashboard_reads_the_provisioned_data_source() -> None:
    datasources = yaml.safe_load(
        (GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text()
    )["datasources"]
    uids = {source["uid"] for source in datasources}
    panels = [panel for panel in DASHBOARD["panels"] if panel["type"] != "row"]
    assert panels
    for panel in panels:
        assert panel["datasource"]["uid"] in uids, panel["title"]
        assert panel["targets"], panel["title"]
    ids = [panel["id"] for panel in DASHBOARD["panels"]]
    assert len(ids) == len(set(ids))
    provider = yaml.safe_load(
        (GRAFANA / "provisioning" / "dashboards" / "marketplace.yml").read_text()
    )["providers"][0]
    assert provider["options"]["path"] == "/etc/grafana/dashboards"


def test_the_dashboard_and_the_rules_cover_what_operators_alert_on() -> None:
    alerted = " ".join(rule["expr"] for rule in RULES)
    shown = " ".join(_dashboard_exprs())
    for name in (
        "marketplace_orders_push_oldest_wait_seconds",
        "marketplace_dead_letters",
        "marketplace_pull_lag_seconds_bucket",
        "marketplace_sellers_pulls_failing",
        "marketplace_grants_needing_reauthorization",
        "marketplace_refresh_tokens_expiring",
        "marketplace_platform_calls_recent",
        "marketplace_embargo_remaining_seconds",
        "marketplace_feed_runs_failed_recent",
        "marketplace_edrts_statuses_oldest_wait_seconds",
    ):
        assert name in alerted, f"no alert reads {name}"
        assert name in shown, f"the dashboard does not show {name}"
