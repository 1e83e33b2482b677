"""`kqbench run results/peer/scheduler-cluster.yaml`, scaled down to 300 Workloads and the reference scheduler,
end to end on a real kwok cluster: the held-queue phase fills the zero-quota ClusterQueue, waits until every
Workload is processed, reads a page idle, under churn and beside the proxy ceiling, then admits them all."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness.drivers.heldqueue import reporting
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

SCENARIO = Path(__file__).resolve().parents[2] / "results" / "peer" / "scheduler-cluster.yaml"
WORKLOADS = 300
SCALED = ("phases.held.workloads=300", "phases.held.process_seconds=120", "phases.held.idle_seconds=1",
          "phases.held.readers=4", "phases.held.read_seconds=3", "phases.held.churn_per_second=10",
          "phases.held.admit_seconds=60")


def run_scaled(folder: Path, implementations: str) -> Path:
    sets = [item for value in (f"sweep.scheduler={implementations}", *SCALED) for item in ("--set", value)]
    result = run_cli("run", str(SCENARIO), "--out", str(folder), *sets, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    [out] = [p for p in folder.iterdir() if p.is_dir()]
    return out


@pytest.fixture(scope="module")
def run(binaries, state_dir, tmp_path_factory) -> Path:
    return run_scaled(tmp_path_factory.mktemp("heldqueue"), "[{implementation: reference}]")


def table(out: Path, name: str) -> pd.DataFrame:
    return pd.read_parquet(out / "tables" / f"{name}.parquet")


def test_every_workload_was_processed_then_admitted_within_the_bounds(run):
    assert json.loads((run / "run.json").read_text())["status"] == "ok"
    milestones = table(run, "heldqueue_milestones").set_index("milestone")
    assert milestones.loc["processed", "reached"] and milestones.loc["processed", "done"] == WORKLOADS
    # the quota raised to all of them: every one admitted (the churn's last Workload may be too)
    assert milestones.loc["admitted", "reached"] and milestones.loc["admitted", "done"] >= WORKLOADS
    figures = table(run, "heldqueue_figures").set_index("metric")["value"]
    assert figures["pending_gauge"] == WORKLOADS  # the scheduler counted every one, none admitted at zero quota
    assert figures["etcd_bytes_per_workload"] > 0 and figures["rss_bytes_per_pending"] > 0
    assert figures["admissions_per_second"] > 0
    writes = table(run, "heldqueue_writes")
    # admitting writes each Workload's status: at least one workloads/status write per admission
    admitted = writes[(writes["window"] == "admitted") & (writes["resource"] == "workloads/status")]["writes"].sum()
    assert admitted >= WORKLOADS


def test_each_read_arm_read_pages_and_the_page_cache_served_the_idle_queue(run):
    reads = table(run, "heldqueue_reads").set_index("arm")
    assert list(reads.index) == ["cq_page_idle", "cq_page_churn", "proxy_ceiling"]
    assert (reads["requests"] > 0).all()
    # idle: the page is encoded once and served from the cache after; under churn the queue keeps changing
    assert reads.loc["cq_page_idle", "page_hits"] > reads.loc["cq_page_idle", "page_misses"]
    assert reads.loc["cq_page_churn", "churn_created"] > 0 and reads.loc["cq_page_churn", "page_misses"] > 0


def test_the_summary_and_the_report_carry_the_drivers_figures(run):
    metrics = json.loads((run / "summary.json").read_text())["metrics"]
    for name in ("heldqueue.processed_seconds", "heldqueue.processed_reached", "heldqueue.admissions_per_second",
                 "heldqueue.apiserver_writes_per_admission", "heldqueue.pages_per_second[cq_page_churn]",
                 "heldqueue.pages_per_second[proxy_ceiling]", "heldqueue.etcd_bytes_per_workload"):
        assert any(key.startswith(name) for key in metrics), name
    assert not any(".ratio_to_kueue." in key for key in metrics)  # no Kueue case in this run
    assert reporting.TITLE in (run / "report.html").read_text()


@pytest.mark.nightly  # Kueue's start-up and its own processing: minutes (make test-nightly)
def test_ours_and_kueue_in_one_run_give_ratios(binaries, state_dir, tmp_path_factory):
    out = run_scaled(tmp_path_factory.mktemp("heldqueue-kueue"), "[{implementation: reference}, {implementation: kueue}]")
    milestones = table(out, "heldqueue_milestones")
    assert set(milestones["implementation"]) == {"reference", "kueue"}
    metrics = json.loads((out / "summary.json").read_text())["metrics"]
    assert any(".ratio_to_kueue.admissions_per_second" in key for key in metrics), sorted(metrics)
