"""The test-suite benchmark's pure parts: pytest's closing line as counts, and JUnit XML as seconds per file."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

TOOLING = Path(__file__).resolve().parents[3] / "benchmarks" / "tooling"


@pytest.fixture
def bench(monkeypatch):
    monkeypatch.syspath_prepend(str(TOOLING))
    return importlib.import_module("bench_test_suite")


def test_the_closing_line_gives_each_outcome_and_zero_for_the_absent(bench):
    counts = bench.counts_of("2229 passed, 37 skipped, 21 deselected, 1 error, 21 warnings in 2358.33s (0:39:18)")
    assert counts == {"passed": 2229, "skipped": 37, "failed": 0, "error": 1, "deselected": 21}
    assert bench.counts_of("") == {"passed": 0, "skipped": 0, "failed": 0, "error": 0, "deselected": 0}


def test_junit_cases_add_up_by_file_and_the_slowest_come_first(bench, tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text("""<?xml version="1.0"?><testsuites><testsuite name="pytest">
      <testcase classname="tests.integration.test_faults" name="test_a" time="250.0"/>
      <testcase classname="tests.unit.stats.test_gate.TestGate" name="test_b" time="2.5"/>
      <testcase classname="tests.unit.stats.test_gate" name="test_c" time="1.5"/>
    </testsuite></testsuites>""")
    slowest, by_file = bench.times_of(junit)
    assert by_file == {"tests/integration/test_faults.py": 250.0, "tests/unit/stats/test_gate.py": 4.0}
    assert [c["test"] for c in slowest] == ["tests/integration/test_faults.py::test_a",
                                           "tests/unit/stats/test_gate.py::test_b", "tests/unit/stats/test_gate.py::test_c"]


def test_a_failure_keeps_its_test_and_the_start_of_its_message(bench, tmp_path):
    junit = tmp_path / "junit.xml"
    junit.write_text("""<?xml version="1.0"?><testsuites><testsuite name="pytest">
      <testcase classname="tests.integration.test_kueue" name="test_x[v0.19.2]" time="130.0">
        <failure message="AssertionError: Kueue v0.19.2 did not admit 10 Workloads">traceback here</failure>
      </testcase>
      <testcase classname="tests.unit.test_y" name="test_ok" time="0.1"/>
    </testsuite></testsuites>""")
    [failure] = bench.failures_of(junit)
    assert failure["test"] == "tests.integration.test_kueue::test_x[v0.19.2]" and failure["outcome"] == "failure"
    assert failure["message"].startswith("AssertionError: Kueue v0.19.2 did not admit") and "traceback" in failure["message"]
