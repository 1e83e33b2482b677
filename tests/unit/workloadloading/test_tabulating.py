"""The workload-loading tables, summary metrics and report table (pure), and the committed scenario."""

import pandas as pd
import pytest

from harness.drivers.workloadloading import phases, reporting, tabulating
from harness.scenarios import loading

STAGES = tabulating.Stages(written=23.2, served=24.6, held=25.0)
CPU = {"kube-apiserver": 22.6, "etcd": 3.6, "scheduler": 2.3, "kqbench": 5.3}


def tables(*phases_run: tuple[str, str, int], case: str = "r0") -> dict[str, pd.DataFrame]:
    out: dict[str, list[pd.DataFrame]] = {}
    for name, path, count in phases_run:
        phase = phases.LoadWorkloadsPhase(path=path, count=count, namespace=f"{path}-ns")
        for table, frame in tabulating.frames(name, "reference", phase, STAGES, 0.0, CPU, 1_000_000).items():
            out.setdefault(table, []).append(frame.assign(case=case))
    return {table: pd.concat(frames, ignore_index=True) for table, frames in out.items()}


def test_one_row_per_phase_and_one_cpu_row_per_process():
    run = tables(("posts", "posts", 10_000))
    [row] = run[tabulating.TABLE].to_dict("records")
    assert (row["path"], row["count"], row["pending_seconds"]) == ("posts", 10_000, 25.0)
    assert row["workloads_per_second_pending"] == pytest.approx(400.0)
    assert sorted(run[tabulating.CPU_TABLE]["component"]) == sorted(CPU)


def test_metrics_per_phase_with_the_apiservers_cpu_per_workload():
    run = tables(("posts", "posts", 10_000), ("bulk", "bulk", 100_000))
    metrics = {m.name: m for m in tabulating.metrics(run, "r0")}
    assert metrics["workload_loading.posts.apiserver_cpu_ms_per_workload"].value == pytest.approx(2.26)
    assert metrics["workload_loading.bulk.workloads_per_second"].value == pytest.approx(4_000.0)
    assert metrics["workload_loading.bulk.pending_seconds"].better == "lower"
    assert tabulating.metrics(run, "other") == [] and tabulating.metrics({}, "r0") == []


def test_the_report_table_has_a_cpu_column_per_process():
    shown = reporting.table(tables(("posts", "posts", 10), ("bulk", "bulk", 10)))
    assert list(shown["phase"]) == ["posts", "bulk"] and shown["cpu kube-apiserver s"].tolist() == [22.6, 22.6]
    assert reporting.section({}) is None and "bulk" in reporting.section(tables(("bulk", "bulk", 10))).html


def test_the_committed_scenario_posts_10k_then_bulk_loads_100k_into_queues_without_quota():
    scenario = loading.load("results/bringup/workloads-bulk-and-posts.yaml").scenario
    assert [(p.path, p.count) for p in scenario.phases.values()] == [("posts", 10_000), ("bulk", 100_000)]
    for phase in scenario.phases.values():
        cq = scenario.queues.cluster_queue_of(phase.namespace, phase.local_queue)
        [spec] = [c for c in scenario.queues.cluster_queues if c.name == cq]
        assert {str(r.nominal) for g in spec.resource_groups for f in g.flavors for r in f.resources} == {"0"}
