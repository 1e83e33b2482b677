"""Kueue's definitions on hand-made records: usage integral, time to admission, wall time."""

from __future__ import annotations

import pytest

from harness.drivers.kueuebaseline import figures as figs, tabulating


def record(name="w", cq="cq-0", cls="small", cpu=1000, created=0.0, admitted=None, finished=None, evicted_at=()):
    r = figs.WorkloadRecord(name, cq, cls, cpu, created)
    for start, end in evicted_at:
        r.on_admitted(start)
        r.on_released(end, finished=False)
    if admitted is not None:
        r.on_admitted(admitted)
    if finished is not None:
        r.on_released(finished, finished=True)
    return r


def test_usage_is_cpu_time_over_nominal_times_window():
    # One CQ of 2 CPU nominal, 10 s window: 1 CPU for 4 s + 2 CPU for 3 s = 10 CPU s of 20 -> 50 %.
    records = [record("a", cpu=1000, created=0, admitted=1, finished=5),
               record("b", cls="large", cpu=2000, created=0, admitted=7, finished=10)]
    result = figs.compute(records, {"cq-0": 2000}, start=0.0)
    assert result.wall_seconds == 10 and result.cq_usage_percent == pytest.approx(50.0)
    assert result.complete


def test_time_to_admission_is_the_first_admission_per_class():
    records = [record("a", created=0, admitted=4, finished=5, evicted_at=[(1, 2)]),
               record("b", created=1, admitted=3, finished=4),
               record("c", cls="large", cpu=2000, created=2, admitted=2.5, finished=3.5)]
    result = figs.compute(records, {"cq-0": 4000}, start=0.0)
    small, large = result.classes[0], result.classes[1]
    assert (small.workload_class, large.workload_class) == ("small", "large")
    assert small.mean_time_to_admission_seconds == pytest.approx((1 + 2) / 2)  # a was first admitted at 1
    assert small.evictions == 1 and large.mean_time_to_admission_seconds == pytest.approx(0.5)
    # usage counts a's evicted interval too: (1 + 1 + 1) CPU s + 2 x 1 CPU s = 5 of 4 x 5 = 20 -> 25 %
    assert result.cq_usage_percent == pytest.approx(25.0)


def test_unfinished_run_counts_held_quota_until_the_end_and_says_incomplete():
    records = [record("a", created=0, admitted=1), record("b", created=0)]
    result = figs.compute(records, {"cq-0": 1000}, start=0.0, end=5.0)
    assert not result.complete and result.finished == 0
    assert result.cq_usage_percent == pytest.approx(80.0)
    assert result.classes[0].admitted == 1 and result.classes[0].mean_time_to_admission_seconds == 1


def test_comparison_puts_ours_next_to_kueues():
    records = [record("a", created=0, admitted=2, finished=3)]
    rows = {r["metric"]: r for r in figs.comparison(figs.compute(records, {"cq-0": 1000}, start=0.0))}
    assert rows["wall_seconds"]["kueue_published"] == 351.0 and rows["wall_seconds"]["kqbench"] == 3.0
    assert rows["time_to_admission_seconds[small]"]["ratio_to_published"] == pytest.approx(2 / 215.0)
    assert rows["time_to_admission_seconds[large]"]["kqbench"] is None  # not measured, still listed


def test_api_timestamps_give_the_same_figure_at_one_second_resolution():
    records = {"a": record("a", created=0, admitted=2.4), "b": record("b", cls="large", created=0, admitted=0.2)}
    api = {"a": ["2025-01-01T00:00:00Z", "2025-01-01T00:00:02Z", "2025-01-01T00:00:03Z"],
           "b": ["2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z", ""]}
    assert tabulating.api_time_to_admission(records, api) == {"time_to_admission_seconds[small]": 2.0,
                                                              "time_to_admission_seconds[large]": 1.0}
    assert tabulating.api_wall_seconds(api) == 3.0


def test_figures_frame_and_markdown():
    result = figs.compute([record("a", created=0, admitted=2, finished=3)], {"cq-0": 1000}, start=0.0)
    frame = tabulating.figures_frame(result, {"wall_seconds": 3.0}, {"evictions": 0.0})
    assert list(frame["metric"])[:2] == ["wall_seconds", "cq_usage_percent"]
    assert frame.set_index("metric").loc["evictions", "unit"] == "count"
    text = tabulating.markdown(frame)
    assert text.splitlines()[0].startswith("| metric | unit | kqbench") and "| wall_seconds | s | 3 | 3 | 351 |" in text


def _cq(name, used=None, quota="20"):
    status = {} if used is None else {"flavorsUsage": [{"name": "default", "resources": [
        {"name": "cpu", "total": used, "borrowed": "0"}]}]}
    return {"metadata": {"name": name}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
        {"name": "default", "resources": [{"name": "cpu", "nominalQuota": quota}]}]}]}, "status": status}


def test_a_cluster_queue_is_read_as_kueues_recorder_reads_it():
    from harness.drivers.kueuebaseline import generating

    assert generating.queue_event(_cq("cq-1", "20500m"), 5.0) == figs.QueueEvent(5.0, "cq-1", 20500, 20000)
    assert generating.queue_event(_cq("cq-1"), 5.0) == figs.QueueEvent(5.0, "cq-1", 0, 20000)
    assert generating.queue_event({"metadata": {"name": "bare"}}, 1.0) == figs.QueueEvent(1.0, "bare", 0, 0)


def test_usage_from_status_holds_each_value_until_the_next_event_over_the_whole_window():
    E = figs.QueueEvent
    events = [E(0.0, "a", 0, 10_000), E(0.0, "b", 0, 10_000),
              E(10.0, "a", 10_000, 10_000),   # a full from 10 s to 30 s
              E(20.0, "b", 5_000, 10_000),    # b half full from 20 s to 40 s
              E(30.0, "a", 0, 10_000), E(40.0, "b", 0, 10_000)]
    # used: a 10000 x 20 + b 5000 x 20 = 300000; quota 20000 over 40 s = 800000
    assert figs.usage_from_status(events) == pytest.approx(37.5)
    assert figs.usage_from_status([]) is None


def test_figures_prefer_the_status_usage_and_keep_the_workloads_one_beside_it():
    record = figs.WorkloadRecord("w", "a", "small", 10_000, created=0.0)
    record.on_admitted(0.0)
    record.on_released(10.0, finished=True)
    E = figs.QueueEvent
    status = [E(0.0, "a", 10_000, 20_000), E(10.0, "a", 0, 20_000), E(10.0, "other", 5_000, 1)]
    result = figs.compute([record], {"a": 20_000}, start=0.0, queue_events=status)
    assert (result.cq_usage_source, result.cq_usage_percent, result.cq_usage_percent_from_workloads) == (
        "flavorsUsage", 50.0, 50.0)
    assert figs.compute([record], {"a": 20_000}, start=0.0, queue_events=[E(0.0, "a", 0, 20_000)]).cq_usage_source \
        == "workloads"
