"""`kqbench run results/bringup/workloads-bulk-and-posts.yaml` scaled down (100 POSTed, 1,000 bulk-loaded) on a
real cluster with the reference scheduler: each phase ends with the scheduler holding its Workloads pending,
its stages in order, and the CPU of the processes that did the work in the tables, the summary and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from harness.running import runner
from tests.integration.conftest import leftover_processes, run_cli

pytestmark = pytest.mark.integration

SCENARIO = str(Path(__file__).resolve().parents[2] / "results" / "bringup" / "workloads-bulk-and-posts.yaml")


@pytest.fixture(scope="module")
def small_run(binaries, state_dir, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    result = run_cli("run", SCENARIO, "--out", str(out), "--set", "phases.posts.count=100",
                     "--set", "phases.bulk.count=1000", timeout=300)
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    record = json.loads((folder / "run.json").read_text())
    assert leftover_processes(runner.cluster_name(record["run_id"], 0)) == [], "the run's cluster outlived it"
    assert result.returncode == 0, result.stderr[-3000:]
    return folder


def test_each_phase_ends_with_its_workloads_held_pending_stage_by_stage(small_run):
    rows = pd.read_parquet(small_run / "tables" / "workload_loading.parquet").set_index("phase")
    assert list(rows.index) == ["posts", "bulk"] and list(rows["path"]) == ["posts", "bulk"]
    assert list(rows["count"]) == [100, 1000]
    # bulk goes on top of posts in another ClusterQueue: the gauge read is per ClusterQueue
    assert list(rows["scheduler_pending_before"]) == [0, 0]
    assert ((0 < rows["written_seconds"]) & (rows["written_seconds"] <= rows["served_seconds"])
            & (rows["served_seconds"] <= rows["pending_seconds"])).all()
    assert (rows["etcd_db_size_bytes"] > 0).all()


def test_the_processes_that_did_the_work_spent_cpu_on_it(small_run):
    cpu = pd.read_parquet(small_run / "tables" / "workload_loading_cpu.parquet")
    spent = cpu.set_index(["phase", "component"])["cpu_seconds"]
    for phase in ("posts", "bulk"):
        assert spent[(phase, "kube-apiserver")] > 0 and spent[(phase, "scheduler")] > 0
        assert spent[(phase, "etcd")] > 0 and spent[(phase, "kqbench")] > 0


def test_the_summary_and_the_report_have_both_phases(small_run):
    metrics = {key.split(" @ ")[0]: entry["value"]
               for key, entry in json.loads((small_run / "summary.json").read_text())["metrics"].items()}
    for phase in ("posts", "bulk"):
        assert metrics[f"workload_loading.{phase}.workloads_per_second"] > 0
        assert metrics[f"workload_loading.{phase}.apiserver_cpu_ms_per_workload"] > 0
    assert "Pending Workloads by POSTs and by bulk loading" in (small_run / "report.html").read_text()
