"""`kqbench run` of a scaled-down jobs scenario end to end, the reference scheduler and real Kueue in
one run: Jobs through the queue, pods by the real job controller and kube-scheduler, run by kwok;
figures per case, ours / Kueue's in the summary, the report's section."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness.drivers.jobs import resources
from harness.progress import LineProgress
from harness.toolchain import building
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

SCENARIO = {
    "name": "jobs-small",
    "cluster": {"backend": "kwok", "nodes": 10, "jobs": True},
    "queues": {
        "flavors": [{"name": "default"}],
        "cluster_queues": [{"name": "cq-{q}", "each": {"q": 2}, "resource_groups": [{
            "covered_resources": ["cpu"],
            "flavors": [{"flavor": "default", "resources": [{"name": "cpu", "nominal": 4}]}]}]}],
        "local_queues": [{"name": "lq-{q}", "cluster_queue": "cq-{q}", "each": {"q": 2}}]},
    # Kueue's Job reconciler at 3 workers (it ships 5): proves the setting reaches Kueue; ours has no such pool
    "scheduler": {"strategy": "aggregated-indexed", "kueue_concurrency": {"Job.batch": 3}},
    "phases": {"jobs": {"kind": "jobs", "seconds": 240}},
    "load": {"users": {"churn": 0, "querier": 0, "bystander": 0},
             "mix": [{"pods": 2, "cpu": "1", "memory": "0", "runtime_seconds": 2, "per_second": 5, "count": 10}]},
    "measurements": {"scrape_interval_seconds": 5},
    "sweep": {"scheduler.implementation": ["reference", "kueue"]},
}
CASES = 2


@pytest.fixture(scope="module")
def jobs_run(binaries, state_dir, tmp_path_factory) -> Path:
    building.ensure_kueue(LineProgress(interval=10.0))
    folder = tmp_path_factory.mktemp("jobs")
    scenario = folder / "jobs-small.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    result = run_cli("run", str(scenario), "--out", str(folder / "runs"), timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    [run] = [p for p in (folder / "runs").iterdir() if p.is_dir()]
    return run


def figures_by_implementation(run: Path) -> dict[str, pd.Series]:
    frame = pd.read_parquet(run / "tables" / "jobs_figures.parquet")
    overall = frame[frame["job_class"] == ""]
    return {name: rows.set_index("metric")["value"] for name, rows in overall.groupby("implementation")}


@pytest.mark.parametrize("implementation", ["reference", "kueue"])
def test_every_job_completes_within_its_queues_room(jobs_run, implementation):
    figures = figures_by_implementation(jobs_run)[implementation]
    assert figures["jobs"] == 20 and figures["jobs_completed"] == 20 and figures["complete"] == 1
    assert figures["pods_succeeded"] == 40 and figures["jobs_failed"] == 0
    # each ClusterQueue holds 4 CPU, a Job needs 2: at most 2 Jobs per queue run at once
    assert 2 <= figures["most_jobs_running"] <= 4
    assert figures["pods_bound_per_second_sustained"] > 0
    jobs = pd.read_parquet(jobs_run / "tables" / "jobs_jobs.parquet")
    jobs = jobs[jobs["implementation"] == implementation]
    assert (jobs["admitted_s"] <= jobs["first_running_s"]).all() and (jobs["first_running_s"] < jobs["completed_s"]).all()
    # a pod runs its 2 s: no Job completes sooner after its first pod ran
    assert ((jobs["completed_s"] - jobs["first_running_s"]) >= 1.5).all()


def test_the_summary_report_and_invariants_say_so(jobs_run):
    metrics = json.loads((jobs_run / "summary.json").read_text())["metrics"]
    complete = {key: entry["value"] for key, entry in metrics.items() if key.startswith("jobs.complete @")}
    assert len(complete) == CASES and set(complete.values()) == {1}, complete
    assert any(key.startswith("jobs.ratio_to_kueue.wall_seconds @") for key in metrics), sorted(metrics)
    report = (jobs_run / "report.html").read_text()
    assert "jobs: batch Jobs through the queue" in report and "API load per resource" in report
    assert "ours / Kueue, same run" in report
    invariants = pd.read_parquet(jobs_run / "tables" / "invariants.parquet")
    assert set(invariants["status"]) == {"passed"}, invariants[invariants["status"] != "passed"].to_dict("records")


def test_pods_are_the_busiest_resource_and_kube_scheduler_was_measured(jobs_run):
    table = pd.read_parquet(jobs_run / "tables" / "summary.parquet")
    assert table["case"].nunique() == CASES
    for case in table["case"].unique():
        load = resources.by_resource(table, case, "jobs").set_index("resource")
        assert load.loc["pods", "writes_per_s"] > 0 and load.loc["jobs.batch", "writes_per_s"] > 0
        cpu = resources.by_process(table, case, "jobs").set_index("component")
        assert {"kube-scheduler", "kube-controller-manager", "kube-apiserver", "scheduler"} <= set(cpu.index)
        # the job controller's work queue and kube-scheduler's attempts come from their own /metrics
        queues = resources.controller_manager_queues(table, case, "jobs").set_index("work_queue")
        assert queues.loc["job", "adds"] >= 20, queues
        assert resources.kube_scheduler(table, case, "jobs").get("attempts_per_s_scheduled", 0) > 0


def test_kueue_runs_its_job_reconciler_with_the_workers_the_scenario_asked_for(jobs_run):
    table = pd.read_parquet(jobs_run / "tables" / "summary.parquet")
    [kueue_case] = [case for case in table["case"].unique() if "kueue" in case]
    controllers = resources.kueue_controllers(table, kueue_case, "jobs").set_index("controller")
    assert controllers.loc["job", "workers"] == 3 and controllers.loc["job", "reconciles"] >= 20
    assert controllers.loc["workload_controller", "workers"] == 5  # what Kueue ships stays
    assert controllers.loc["job", "queue_wait_p99_s"] >= 0
    assert "Kueue's reconcilers" in (jobs_run / "report.html").read_text()
