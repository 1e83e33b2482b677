"""SLO checks: failures first with their request counts; a p99 over too few requests is
"insufficient samples", neither PASS nor FAIL, in the report, the summary and JUnit."""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pandas as pd

from harness.metrics import slo as slo_rules
from harness.reporting import exporting, slochecks
from harness.results import headlines
from tests.unit.reporting import builders


def _slo() -> pd.DataFrame:
    return pd.DataFrame([
        builders._check("c,r0", "fill", "POST", "queuepositions", 2, 2.98),     # 2 requests, p99 2.98 s
        builders._check("c,r0", "churn", "GET", "pods", 5000, 1.7),             # a real failure
        builders._check("c,r0", "churn", "PATCH", "workloads", 800, 3.5),       # a worse one
        builders._check("c,r0", "churn", "POST", "workloads", 900, 0.05),
        builders._check("c,r0", "query", "GET", "configmaps", 99, 0.02),
    ])


def test_a_p99_over_two_requests_is_insufficient_not_fail():
    assert slochecks.verdict(2, passed=False) == slochecks.INSUFFICIENT
    assert slochecks.verdict(slo_rules.MIN_COUNT, passed=False) == slochecks.FAIL
    view = slochecks.judge(_slo(), {"c,r0": "single-object"})
    assert list(view.failures["resource"]) == ["workloads", "pods"]  # worst over its threshold first
    assert list(view.failures["count"]) == [800.0, 5000.0]
    assert list(view.thin_over["resource"]) == ["queuepositions"] and view.thin_over["column"][0] == "single-object"
    counts = view.per_phase.set_index("phase")
    assert counts.loc["fill"].to_dict() == {"PASS": 0, "FAIL": 0, "insufficient samples": 1}
    assert counts.loc["churn"].to_dict() == {"PASS": 1, "FAIL": 2, "insufficient samples": 0}
    assert counts.loc["query", "insufficient samples"] == 1 and view.min_count == 100


def test_the_summary_and_junit_do_not_count_an_insufficient_check_as_failed():
    slo = _slo()
    failed = next(m for m in headlines.metrics({"slo": slo}, "c,r0") if m.name == "slo.failed_checks")
    assert failed.value == 2.0
    suite = ET.fromstring(exporting.junit({"slo": slo}, "r"))
    assert suite.get("failures") == "2" and len(suite.findall("testcase/skipped")) == 2
    assert "insufficient samples: 2 requests < 100" in {s.get("message") for s in suite.iter("skipped")}
