"""Jobs figures on hand-made records: rates, latencies, concurrency."""

from __future__ import annotations

import pytest

from harness.drivers.jobs import figures as figs, recording, tabulating


def test_per_second_counts_and_rates():
    counts = figs.per_second([0.1, 0.9, 1.2, 5.0], start=0.0)
    assert counts == {0: 2, 1: 1, 5: 1}
    assert figs.sustained_rate([0.0, 1.0, 2.0, 4.0]) == pytest.approx(1.0)
    assert figs.sustained_rate([3.0]) is None
    assert figs.peak_rate({0: 10, 1: 10, 30: 1}, window=2) == pytest.approx(10.0)


def test_most_at_once_counts_open_intervals_and_closes_before_opening_at_one_instant():
    assert figs.most_at_once([(0, 2), (2, 4), (3, None)], end=10) == 2
    assert figs.most_at_once([], end=1) == 0


def test_distribution_quantiles_are_nearest_rank():
    dist = figs.distribution(float(v) for v in range(1, 101))
    assert (dist.count, dist.p50, dist.p90, dist.p99, dist.max) == (100, 50.0, 90.0, 99.0, 100.0)
    assert figs.distribution([]) is None


def test_compute_on_two_jobs():
    r = recording.Recorder()
    for name, created, admitted, running, completed in (("a", 0.0, 1.0, 2.0, 10.0), ("b", 1.0, 5.0, 6.0, 14.0)):
        job = recording.JobRecord("ns", name, "small", "cq", pods=1, created=created, admitted=admitted,
                                  unsuspended=admitted, first_running=running, completed=completed,
                                  workload_finished=completed)
        r.jobs[job.key] = job
        r.pods[("ns", f"{name}-0")] = recording.PodRecord(job.key, created=admitted + 0.2, bound=admitted + 0.5,
                                                         running=running, succeeded=completed)
    f = figs.compute(r, start=0.0, end=20.0)
    assert f.complete and f.jobs == 2 and f.pods_succeeded == 2 and f.wall_seconds == 14.0
    assert f.job_latency["admitted"].mean == pytest.approx((1 + 4) / 2)
    assert f.job_latency["completed"].max == pytest.approx(13.0)
    assert f.pod_latency["bind"].p50 == pytest.approx(0.3)
    assert f.most_jobs_running == 2 and f.most_pods_running == 2
    frame = tabulating.figures_frame(f, {"create_failures": 0})
    overall = frame[frame["job_class"] == ""].set_index("metric")["value"]
    assert overall["time_to_admission_p50_seconds"] == pytest.approx(1.0)
    assert overall["pods_bound_per_second_sustained"] == pytest.approx(2 / 4.0)
    assert set(frame[frame["job_class"] == "small"]["metric"]) >= {"time_to_complete_p99_seconds"}
    rates = tabulating.rates_frame(f)
    assert rates[rates["series"] == "pods_succeeded"]["count"].sum() == 2


def test_an_unfinished_run_is_incomplete_and_its_wall_is_the_phase():
    r = recording.Recorder()
    job = recording.JobRecord("ns", "a", "small", "cq", pods=1, created=0.0)
    r.jobs[job.key] = job
    f = figs.compute(r, start=0.0, end=30.0)
    assert not f.complete and f.wall_seconds == 30.0 and f.job_latency["admitted"] is None
