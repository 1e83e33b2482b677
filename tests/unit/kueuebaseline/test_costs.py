"""What each implementation's scheduler cost, from a run's summary rows, and its ratio to Kueue's."""

import json

import pandas as pd
import pytest

from harness.drivers.kueuebaseline import costs, summarising

OURS, KUEUE = "implementation=reference,r0", "implementation=kueue,r0"


def _summary_row(case, source, metric, stat, value, **labels):
    return {"case": case, "source": source, "metric": metric, "stat": stat, "labels": json.dumps(labels),
            "phase": "churn", "t": 0.0, "value": value}


def _tables() -> dict[str, pd.DataFrame]:
    summary = pd.DataFrame([
        _summary_row(OURS, "scheduler", "kqbench_scheduler_cycle_duration_seconds", "count", 100),
        _summary_row(OURS, "scheduler", "kqbench_scheduler_cycle_duration_seconds", "sum", 5.0),
        _summary_row(OURS, "scheduler", "kqbench_scheduler_admitted_total", "delta", 60, cluster_queue="a"),
        _summary_row(OURS, "scheduler", "kqbench_scheduler_admitted_total", "delta", 40, cluster_queue="b"),
        _summary_row(OURS, "apiserver", "apiserver_request_total", "delta", 200, verb="POST", resource="workloads"),
        _summary_row(OURS, "apiserver", "apiserver_request_total", "delta", 250, verb="APPLY", resource="workloads"),
        _summary_row(OURS, "apiserver", "apiserver_request_total", "delta", 9999, verb="LIST", resource="workloads"),
        _summary_row(OURS, "process", "cpu_seconds", "delta", 30.0, component="scheduler", pid="1"),
        _summary_row(OURS, "process", "cpu_seconds", "delta", 90.0, component="kube-apiserver", pid="2"),
        _summary_row(OURS, "process", "rss_bytes", "max", 100.0, component="scheduler", pid="1"),
        # Kueue: one cycle per schedule() call, two results
        _summary_row(KUEUE, "kueue", "kueue_admission_attempt_duration_seconds", "count", 30, result="success"),
        _summary_row(KUEUE, "kueue", "kueue_admission_attempt_duration_seconds", "count", 10, result="inadmissible"),
        _summary_row(KUEUE, "kueue", "kueue_admission_attempt_duration_seconds", "sum", 4.0, result="success"),
        _summary_row(KUEUE, "kueue", "kueue_admission_attempt_duration_seconds", "sum", 0.0, result="inadmissible"),
        _summary_row(KUEUE, "kueue", "kueue_admitted_workloads_total", "delta", 100, cluster_queue="a"),
        _summary_row(KUEUE, "apiserver", "apiserver_request_total", "delta", 500, verb="POST", resource="events"),
        _summary_row(KUEUE, "process", "cpu_seconds", "delta", 20.0, component="scheduler", pid="3"),
        _summary_row(KUEUE, "process", "rss_bytes", "max", 400.0, component="scheduler", pid="3"),
    ])
    figures = pd.DataFrame([
        {"case": case, "phase": "churn", "implementation": impl, "metric": metric, "unit": "", "kqbench": value}
        for case, impl in ((OURS, "reference"), (KUEUE, "kueue"))
        for metric, value in (("wall_seconds", 50.0 if impl == "reference" else 100.0), ("workloads", 100),
                              ("finished", 100), ("finish_failures", 10 if impl == "reference" else 0))])
    return {"summary": summary, "kueue_baseline": figures}


def test_costs_per_case_from_the_scrapes_less_the_generators_own_writes():
    tables = _tables()
    ours = costs.case_costs(tables["summary"], tables["kueue_baseline"], OURS, "churn")
    assert ours["cycle_seconds_mean"] == pytest.approx(0.05)
    assert ours["admissions_per_second"] == pytest.approx(100 / 50)
    # 450 writes (reads left out) less 100 creations, 100 Finished and 10 retried Finished
    assert ours["writes_per_admission"] == pytest.approx((450 - 210) / 100)
    assert (ours["scheduler_cpu_seconds"], ours["scheduler_rss_max_bytes"]) == (30.0, 100.0)
    theirs = costs.case_costs(tables["summary"], tables["kueue_baseline"], KUEUE, "churn")
    assert theirs["cycle_seconds_mean"] == pytest.approx(4.0 / 40)  # both results are cycles
    assert theirs["writes_per_admission"] == pytest.approx((500 - 200) / 100)


def test_the_reference_case_carries_its_ratios_to_kueues_twin():
    metrics = {m.name: m.value for m in summarising.metrics(_tables(), OURS)}
    assert metrics["kueue.ratio_to_kueue.admissions_per_second"] == pytest.approx(2.0)
    assert metrics["kueue.ratio_to_kueue.scheduler_rss_max_bytes"] == pytest.approx(0.25)
    assert metrics["kueue.ratio_to_kueue.cycle_seconds_mean"] == pytest.approx(0.5)
    assert not any(name.startswith("kueue.ratio_to_kueue") for name in
                   (m.name for m in summarising.metrics(_tables(), KUEUE)))
