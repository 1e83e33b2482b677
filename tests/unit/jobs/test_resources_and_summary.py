"""API load per resource and CPU per process from a summary table; the jobs summary metrics."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from harness.drivers.jobs import reporting, resources, summarising, tabulating


def row(metric, stat, value, source="apiserver", phase="jobs", case="c0", **labels):
    return {"case": case, "source": source, "metric": metric, "stat": stat, "labels": json.dumps(labels),
            "phase": phase, "t": 1.0, "value": value}


def test_requests_are_split_into_reads_and_writes_per_resource_with_its_group():
    summary = pd.DataFrame([
        row("apiserver_request_total", "rate", 10.0, verb="POST", resource="pods", group=""),
        row("apiserver_request_total", "rate", 5.0, verb="PATCH", resource="pods", group=""),
        row("apiserver_request_total", "rate", 2.0, verb="LIST", resource="pods", group=""),
        row("apiserver_request_total", "rate", 3.0, verb="PUT", resource="jobs", group="batch"),
        row("apiserver_request_total", "rate", 99.0, verb="PUT", resource="jobs", group="batch", phase="other"),
        row("apiserver_watch_events_total", "rate", 40.0, resource="pods", group=""),
        row("apiserver_resource_objects", "last", 800.0, resource="pods", group=""),
    ])
    frame = resources.by_resource(summary, "c0", "jobs").set_index("resource")
    assert frame.index[0] == "pods"
    assert frame.loc["pods", "writes_per_s"] == 15.0 and frame.loc["pods", "reads_per_s"] == 2.0
    assert frame.loc["pods", "watch_events_sent_per_s"] == 40.0 and frame.loc["pods", "objects_counted"] == 800.0
    assert frame.loc["jobs.batch", "writes_per_s"] == 3.0


def test_cpu_per_process_busiest_first():
    summary = pd.DataFrame([
        row("cpu_seconds", "rate", 0.4, source="process", component="etcd", pid="1"),
        row("cpu_seconds", "rate", 1.2, source="process", component="kube-apiserver", pid="2"),
        row("rss_bytes", "max", float(2 << 20), source="process", component="etcd", pid="1"),
    ])
    frame = resources.by_process(summary, "c0", "jobs")
    assert list(frame["component"]) == ["kube-apiserver", "etcd"]
    assert frame.set_index("component").loc["etcd", "rss_max_mib"] == pytest.approx(2.0)


def test_kueue_reconcilers_say_workers_backlog_and_queue_wait_per_controller():
    kueue = {"source": "kueue"}
    summary = pd.DataFrame([
        row("controller_runtime_reconcile_time_seconds", "count", 6000.0, controller="job", **kueue),
        row("controller_runtime_reconcile_time_seconds", "p99", 0.05, controller="job", **kueue),
        row("controller_runtime_max_concurrent_reconciles", "last", 5.0, controller="job", **kueue),
        row("controller_runtime_active_workers", "max", 5.0, controller="job", **kueue),
        row("workqueue_depth", "max", 300.0, controller="job", name="job", priority="", **kueue),
        row("workqueue_depth", "max", 20.0, controller="job", name="job", priority="-100", **kueue),
        row("workqueue_queue_duration_seconds", "p99", 8.0, controller="job", **kueue),
        row("controller_runtime_reconcile_time_seconds", "count", 900.0, controller="clusterqueue", **kueue),
        row("controller_runtime_max_concurrent_reconciles", "last", 1.0, controller="resourceflavor", **kueue),
    ])
    frame = resources.kueue_controllers(summary, "c0", "jobs")
    assert list(frame["controller"]) == ["job", "clusterqueue"]  # resourceflavor reconciled nothing
    job = frame.set_index("controller").loc["job"]
    assert (job["workers"], job["most_workers_busy"], job["largest_backlog"]) == (5.0, 5.0, 320.0)
    assert job["queue_wait_p99_s"] == 8.0 and job["reconcile_p99_s"] == 0.05
    assert resources.kueue_controllers(summary, "c0", "other").empty


def test_controller_manager_queues_and_kube_scheduler_figures():
    kcm, sched = {"source": "kube-controller-manager"}, {"source": "kube-scheduler"}
    summary = pd.DataFrame([
        row("workqueue_adds_total", "delta", 900.0, name="job", **kcm),
        row("workqueue_depth", "max", 250.0, name="job", **kcm),
        row("workqueue_queue_duration_seconds", "p99", 12.0, name="job", **kcm),
        row("workqueue_adds_total", "delta", 40.0, name="garbagecollector_attempt_to_delete", **kcm),
        row("workqueue_depth", "max", 0.0, name="namespace", **kcm),  # took no work: not listed
        row("scheduler_schedule_attempts_total", "rate", 16.0, result="scheduled", profile="default-scheduler", **sched),
        row("scheduler_schedule_attempts_total", "rate", 0.5, result="unschedulable", profile="default-scheduler", **sched),
        row("scheduler_pending_pods", "max", 30.0, queue="active", **sched),
        row("scheduler_scheduling_attempt_duration_seconds", "p99", 0.02, result="scheduled", **sched),
    ])
    queues = resources.controller_manager_queues(summary, "c0", "jobs")
    assert list(queues["work_queue"]) == ["job", "garbagecollector_attempt_to_delete"]
    job = queues.set_index("work_queue").loc["job"]
    assert (job["adds"], job["largest_backlog"], job["queue_wait_p99_s"]) == (900.0, 250.0, 12.0)
    assert resources.kube_scheduler(summary, "c0", "jobs") == {
        "attempts_per_s_scheduled": 16.0, "attempts_per_s_unschedulable": 0.5, "most_pods_pending_active": 30.0,
        "attempt_p99_s_scheduled": 0.02}
    assert resources.kube_scheduler(summary, "c0", "other") == {}


def both_job_queues(kueue_backlog, kueue_wait, kcm_backlog, kcm_wait, case="c0"):
    """Kueue's Job reconciler queue and kube-controller-manager's job controller queue, both named `job`,
    with the labels each process serves (Kueue v0.17.0: controller, name, priority on the depth;
    controller only on the histogram; kube-controller-manager v1.35.4: name)."""
    kueue, kcm = {"source": "kueue", "case": case}, {"source": "kube-controller-manager", "case": case}
    return pd.DataFrame([
        row("controller_runtime_reconcile_time_seconds", "count", 22371.0, controller="job", **kueue),
        row("workqueue_depth", "max", kueue_backlog, controller="job", name="job", priority="0", **kueue),
        *(row("workqueue_queue_duration_seconds", stat, value, controller="job", **kueue)
          for stat, value in zip(("p50", "p99"), kueue_wait)),
        row("workqueue_adds_total", "delta", 29285.0, name="job", **kcm),
        row("workqueue_depth", "max", kcm_backlog, name="job", **kcm),
        *(row("workqueue_queue_duration_seconds", stat, value, name="job", **kcm)
          for stat, value in zip(("p50", "p99"), kcm_wait)),
    ])


@pytest.mark.parametrize("kueue_backlog, kueue_wait, kcm_backlog, kcm_wait", [
    # kueue-workers-10k-20261201-070901's summary.parquet, phase jobs: Kueue as shipped (5 workers), then with 50
    (1725.0, (36.001589, 98.720032), 52.0, (0.000073, 0.927389)),
    (7.0, (0.000007, 0.483852), 366.0, (0.057647, 9.694249)),
], ids=["kueue-5-workers", "kueue-50-workers"])
def test_each_processs_job_queue_stays_its_own(kueue_backlog, kueue_wait, kcm_backlog, kcm_wait):
    """Two processes' queues of one name are two rows in two tables, never a sum or a max of both."""
    summary = both_job_queues(kueue_backlog, kueue_wait, kcm_backlog, kcm_wait)
    kueue = resources.kueue_controllers(summary, "c0", "jobs").set_index("controller")
    assert list(kueue.index) == ["job"]
    assert kueue.loc["job", "largest_backlog"] == kueue_backlog
    assert (kueue.loc["job", "queue_wait_p50_s"], kueue.loc["job", "queue_wait_p99_s"]) == kueue_wait
    kcm = resources.controller_manager_queues(summary, "c0", "jobs").set_index("work_queue")
    assert list(kcm.index) == ["job"]
    assert kcm.loc["job", "largest_backlog"] == kcm_backlog
    assert (kcm.loc["job", "queue_wait_p50_s"], kcm.loc["job", "queue_wait_p99_s"]) == kcm_wait


def figures_table(case, implementation, wall):
    return pd.DataFrame([
        {"metric": "wall_seconds", "value": wall, "unit": "s", "job_class": "", "case": case, "phase": "jobs",
         "implementation": implementation},
        {"metric": "time_to_admission_p50_seconds", "value": 1.0, "unit": "s", "job_class": "small", "case": case,
         "phase": "jobs", "implementation": implementation},
        {"metric": "complete", "value": 1.0, "unit": "count", "job_class": "", "case": case, "phase": "jobs",
         "implementation": implementation}])


def test_metrics_of_a_case_and_ratio_to_kueue_in_the_same_run():
    frame = pd.concat([figures_table("ours", "reference", 50.0), figures_table("theirs", "kueue", 100.0)])
    metrics = {m.name: m for m in summarising.metrics({tabulating.FIGURES_TABLE: frame}, "ours")}
    assert metrics["jobs.wall_seconds"].value == 50.0 and metrics["jobs.complete"].better == "higher"
    assert "jobs.time_to_admission_p50_seconds" not in metrics  # per-class rows are not headline entries
    assert metrics["jobs.ratio_to_kueue.wall_seconds"].value == pytest.approx(0.5)
    assert summarising.metrics({}, "ours") == []


def test_headline_table_has_a_row_per_case():
    frame = pd.concat([figures_table("ours", "reference", 50.0), figures_table("theirs", "kueue", 100.0)])
    table = reporting.headline_table(frame)
    assert list(table["case"]) == ["ours", "theirs"] and list(table["wall s"]) == [50.0, 100.0]


def test_with_an_arm_swept_too_each_reference_case_is_compared_with_kueue_in_the_same_arm():
    frame = pd.concat([figures_table("arm=a,implementation=reference,r0", "reference", 50.0),
                       figures_table("arm=a,implementation=kueue,r0", "kueue", 100.0),
                       figures_table("arm=b,implementation=reference,r0", "reference", 60.0),
                       figures_table("arm=b,implementation=kueue,r0", "kueue", 200.0)])
    assert summarising.ratios_to_kueue(frame, "arm=a,implementation=reference,r0") == {"wall_seconds": 0.5}
    assert summarising.ratios_to_kueue(frame, "arm=b,implementation=reference,r0") == {"wall_seconds": 0.3}
    # two Kueue cases and no twin: no guess
    assert summarising.ratios_to_kueue(frame.replace("arm=a,implementation=kueue,r0", "other"),
                                       "arm=a,implementation=reference,r0") == {}


@pytest.mark.parametrize("value, shown", [(104838.0, "104,838"), (1725.0, "1,725"), (36.0, "36"), (0.9274, "0.927"),
                                          (5.396e-06, "<0.001"), (0.0, "0"), (8.824, "8.82")])
def test_report_numbers_read_without_exponents(value, shown):
    assert reporting.number(value) == shown
