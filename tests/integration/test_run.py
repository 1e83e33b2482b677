"""`kqbench run tiny` end to end on a real kwok cluster; compare passes on itself, fails when doctored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.results import keeping, storing, stores
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tiny_run(binaries, state_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    result = run_cli("run", "tiny", "--out", str(out), timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    return folder


def test_run_produces_every_result_file(tiny_run):
    for name in ("run.json", "summary.json", "report.html", "perfdata.json", "junit.xml",
                 "tables/observations.parquet", "tables/observations.csv", "tables/summary.parquet"):
        assert (tiny_run / name).is_file(), name
    record = json.loads((tiny_run / "run.json").read_text())
    assert record["status"] == "ok" and [c["status"] for c in record["cases"]] == ["ok", "ok"]
    assert record["cases"][0]["binaries"]["kubernetes"]
    # what the scheduler sent its requests under: tiny.yaml's qps, the reference scheduler's own burst
    assert record["cases"][0]["client_limits"] == {"qps": 50.0, "burst": 100}
    summary = json.loads((tiny_run / "summary.json").read_text())
    assert any(key.startswith("apiserver.write_qps") for key in summary["metrics"])


def test_the_runs_raw_data_is_in_the_store_and_git_keeps_under_a_mebibyte_of_it(tiny_run, tmp_path):
    manifest = storing.read_manifest(tiny_run)
    assert {"tables/observations.parquet", "report.html", "summary.json"} <= set(manifest.by_path)
    kept = keeping.kept_in_git(tiny_run)
    assert kept.over_budget() == "", kept.over_budget()
    assert "summary.json" in dict(kept.files) and "tables/observations.parquet" not in dict(kept.files)
    # What a clone of the committed folder holds, pulled back: every file byte-identical.
    clone = tmp_path / tiny_run.name
    for name, _ in kept.files:
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_bytes((tiny_run / name).read_bytes())
    storing.pull(clone, stores.open_store())
    assert {e.path: storing.sha256_of(clone / e.path) for e in manifest.entries} == {e.path: e.sha256 for e in manifest.entries}


def test_the_schedulers_own_metrics_are_in_the_tables(tiny_run):
    import pandas as pd

    table = pd.read_parquet(tiny_run / "tables" / "summary.parquet")
    scheduler = table[table["source"] == "scheduler"]
    admitted = scheduler[(scheduler["metric"] == "kqbench_scheduler_admitted_total") & (scheduler["stat"] == "delta")]
    assert admitted["value"].sum() > 0
    assert set(scheduler["phase"]) >= {"fill", "churn"}
    # The churn phase's user takes over what the fill's user left: the Workloads fill got admitted finish
    # after their 30 s, and the quota they free admits more in churn, in every case.
    in_churn = admitted[admitted["phase"] == "churn"].groupby("case")["value"].sum()
    assert len(in_churn) == 2 and (in_churn > 0).all(), in_churn


def test_invariants_were_checked_after_every_phase_and_held(tiny_run):
    import pandas as pd

    table = pd.read_parquet(tiny_run / "tables" / "invariants.parquet")
    record = json.loads((tiny_run / "run.json").read_text())
    phases = set(record["scenario"]["phases"])  # run.json keeps them as a mapping (its key order is not the run's)
    assert set(table[table["case"] == record["cases"][0]["id"]]["phase"]) == phases
    assert set(table["status"]) == {"passed"}, table[table["status"] != "passed"].to_dict("records")
    summary = json.loads((tiny_run / "summary.json").read_text())
    assert all(entry["value"] == 0 for key, entry in summary["metrics"].items() if key.startswith("invariants."))


def test_compare_with_itself_passes(tiny_run):
    result = run_cli("compare", str(tiny_run), str(tiny_run), "--thresholds", "ci/thresholds.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_compare_with_doctored_summary_fails(tiny_run, tmp_path):
    summary = json.loads((tiny_run / "summary.json").read_text())
    for entry in summary["metrics"].values():
        entry["value"] = entry["value"] * 10 + 10 if entry["better"] == "lower" else entry["value"] / 10
    doctored = tmp_path / "summary.json"
    doctored.write_text(json.dumps(summary))
    result = run_cli("compare", str(tiny_run), str(doctored), "--thresholds", "ci/thresholds.yaml")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "regressed" in result.stdout


def test_compare_fails_on_a_significant_regression_beyond_its_threshold(tiny_run, tmp_path):
    """A base whose position-query p50 (an estimate with an interval over its requests) was 10x lower:
    the run is 10x slower with intervals far apart, so compare says regressed and exits 1."""
    summary = json.loads((tiny_run / "summary.json").read_text())
    doctored = 0
    for key, entry in summary["metrics"].items():
        if key.startswith("load.position_query_p50_ms") and entry.get("low") is not None:
            entry.update({f: entry[f] / 10 for f in ("value", "low", "high")}, samples=[v / 10 for v in entry["samples"]])
            doctored += 1
    assert doctored, "the tiny run's position-query p50 has no interval to doctor"
    base = tmp_path / "faster.summary.json"
    base.write_text(json.dumps(summary))
    limits = tmp_path / "thresholds.yaml"
    limits.write_text("schema_version: 1\nthresholds:\n  - {metric: '*', max_regression: 0.5}\n")
    result = run_cli("compare", str(base), str(tiny_run), "--thresholds", str(limits))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "regressed" in result.stdout
