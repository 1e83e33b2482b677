"""The estimators that read past admissions: ``moving-average`` and ``rate``, checked by hand.

Snapshots are taken at t=10000; admission records are built directly (what the edge would keep).
"""

from __future__ import annotations

import pytest

from scheduler.core import admissionrates, estimates, waitaveraging
from scheduler.core.workloads import Workload
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with

NOW = 10_000.0


def record(name: str, queued: float, admitted: float, cq: str = "cq", lq: str = "lq",
           flavors: tuple[str, ...] = ("default",)) -> estimates.AdmissionRecord:
    return estimates.AdmissionRecord(("ns", name), cq, ("ns", lq), queued, admitted, frozenset(flavors))


def pending(name: str, queued: float = 9_990.0, lq: str = "lq", **requests: str) -> Workload:
    return WorkloadBuilder(name).queue(lq).created(queued).request(**(requests or {"cpu": "1"})).obj()


def snapshot(pending_by_cq: dict[str, tuple[Workload, ...]], *records: estimates.AdmissionRecord,
             cluster_queues: tuple = ()) -> estimates.Snapshot:
    return estimates.Snapshot(NOW, pending_by_cq, {cq.name: cq for cq in cluster_queues}, records)


def times(result: dict) -> dict[str, float | str]:
    return {key[1]: e.admission_at if e.admission_at is not None else e.reason for key, e in result.items()}


# -- moving-average ----------------------------------------------------------------------------

WAITS = (
    record("old", 1_000.0, 6_000.0),   # wait 5000, admitted 4000 s ago: outside the hour's window
    record("w1", 8_900.0, 9_000.0),    # wait 100
    record("w2", 9_300.0, 9_500.0),    # wait 200
    record("w3", 9_600.0, 9_900.0),    # wait 300
)


def test_moving_average_over_the_window() -> None:
    # mean of the window's waits: (100 + 200 + 300) / 3 = 200
    # fresh entered at 9950: 9950 + 200 = 10150
    # early entered at 9700: 9700 + 200 = 9900 < now, so now (10000), noted
    averaging = waitaveraging.MovingAverage(waitaveraging.MovingAverageSettings(window_seconds=3_600))
    result = averaging.estimate(snapshot({"cq": (pending("fresh", 9_950.0), pending("early", 9_700.0))}, *WAITS))
    assert times(result) == {"fresh": 10_150.0, "early": 10_000.0}
    assert result[("ns", "early")].note and not result[("ns", "fresh")].note
    assert result[("ns", "fresh")].estimator == "moving-average"


def test_moving_average_with_a_half_life() -> None:
    # half-life 500 s; waits 100, 200, 300 admitted 1000, 500 and 0 s ago weigh 0.25, 0.5 and 1:
    #   (0.25*100 + 0.5*200 + 1*300) / (0.25 + 0.5 + 1) = 425 / 1.75
    records = (record("w1", 8_900.0, 9_000.0), record("w2", 9_300.0, 9_500.0), record("w3", 9_700.0, 10_000.0))
    settings = waitaveraging.MovingAverageSettings(window_seconds=3_600, half_life_seconds=500)
    averages = waitaveraging.average_waits(records, NOW, settings, lambda r: r.cluster_queue)
    assert averages == {"cq": pytest.approx(425 / 1.75)}


def test_moving_average_per_local_queue_falls_back_to_the_cluster_queue() -> None:
    # lq-a's waits: 100; lq-b's: 300; the ClusterQueue's: (100 + 300) / 2 = 200
    # a (lq-a, entered 9990): 9990 + 100 = 10090; c (lq-c, no admissions): 9990 + 200 = 10190
    records = (record("x", 9_800.0, 9_900.0, lq="lq-a"), record("y", 9_600.0, 9_900.0, lq="lq-b"))
    settings = waitaveraging.MovingAverageSettings(per_local_queue=True)
    result = waitaveraging.MovingAverage(settings).estimate(
        snapshot({"cq": (pending("a", lq="lq-a"), pending("c", lq="lq-c"))}, *records))
    assert times(result) == {"a": 10_090.0, "c": 10_190.0}


def test_moving_average_without_admissions() -> None:
    result = waitaveraging.MovingAverage().estimate(snapshot({"cq": (pending("a"),)}, *WAITS[:1]))
    assert times(result) == {"a": estimates.NO_ADMISSIONS}


# -- rate ----------------------------------------------------------------------------------------

def test_rate_on_a_measured_rate() -> None:
    # Window 600 s: admissions at 9500, 9800, 9999 are inside; 9400 is 600 s old, not inside.
    # rate = 3 / 600 = 1/200 per s; the n-th Workload in order is the n-th admission from now:
    #   first: 10000 + 1*200 = 10200, second: 10400, third: 10600
    records = tuple(record(f"r{i}", 9_000.0, t) for i, t in enumerate((9_400.0, 9_500.0, 9_800.0, 9_999.0)))
    rate = admissionrates.AdmissionRate(admissionrates.RateSettings(window_seconds=600))
    result = rate.estimate(snapshot({"cq": (pending("first"), pending("second"), pending("third"))}, *records))
    assert times(result) == {"first": 10_200.0, "second": 10_400.0, "third": 10_600.0}


def test_rate_per_flavor() -> None:
    # cq: cpu from flavor "default", gpu from flavor "a100" (two resource groups).
    # Window 600 s: three CPU-only admissions ({default}) and one GPU one ({default, a100}).
    #   cpu-job (ahead 0): every admission took CPU from "default": 4/600, so 10000 + 600/4 = 10150
    #   gpu-job (ahead 1): only the GPU admission counts: 1/600, so 10000 + 2*600 = 11200
    cq = (ClusterQueueBuilder("cq").flavors(("default", {"cpu": "10"}))
          .flavors(("a100", {"gpu": "4"})).obj())
    records = (record("c1", 9_000.0, 9_500.0), record("c2", 9_000.0, 9_600.0), record("c3", 9_000.0, 9_700.0),
               record("g1", 9_000.0, 9_800.0, flavors=("default", "a100")))
    gpu_job = pending("gpu-job", cpu="1", gpu="1")
    rate = admissionrates.AdmissionRate(admissionrates.RateSettings(window_seconds=600))
    result = rate.estimate(snapshot({"cq": (pending("cpu-job"), gpu_job)}, *records, cluster_queues=(cq,)))
    assert times(result) == {"cpu-job": 10_150.0, "gpu-job": 11_200.0}


def test_rate_without_admissions_gives_no_time() -> None:
    # cq-b admitted nothing: no rate, no time (cq-a's admissions do not count for it).
    result = admissionrates.AdmissionRate().estimate(
        snapshot({"cq-a": (pending("a"),), "cq-b": (pending("b"),)}, record("x", 9_000.0, 9_900.0, cq="cq-a")))
    assert times(result) == {"a": 10_000.0 + 600.0, "b": estimates.NO_ADMISSIONS}


def test_rate_follows_the_core_order() -> None:
    # low is older but high has the higher priority: the core's order (read through snapshot_of) puts
    # high first. One admission in 600 s: high 10000 + 600, low 10000 + 1200.
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    manager.add_workload(WorkloadBuilder("low").created(1.0).obj())
    manager.add_workload(WorkloadBuilder("high").priority(10).created(5.0).obj())
    taken = estimates.snapshot_of(manager, (record("x", 9_000.0, 9_900.0),), NOW, with_world=False)
    assert [w.name for w in taken.pending["cq"]] == ["high", "low"]
    assert times(admissionrates.AdmissionRate().estimate(taken)) == {"high": 10_600.0, "low": 11_200.0}
