"""Fairness figures from a run's per-Workload spans, on cases worked out by hand."""

import math
from pathlib import Path

import pytest

from harness.stats import fairness as fair
from harness.stats.fairness import WorkloadSpan as W


def _queue(result, name):
    return next(q for q in result.queues if q.cluster_queue == name)


def test_equal_queues_sharing_equally_are_perfectly_fair():
    spans = [W("a", 1000, 0, 0, 10), W("b", 1000, 0, 0, 10)]
    result = fair.fairness(spans, {"a": 1, "b": 1})
    assert result.jain_index == pytest.approx(1.0)
    assert result.share_error == pytest.approx(0.0)
    assert result.longest_starvation_seconds == 0.0
    assert _queue(result, "a").mean_share == pytest.approx(0.5)


def test_one_queue_taking_everything_while_the_other_waits():
    # b waits from 0 to 10 holding nothing while a holds all the cpu in use
    spans = [W("a", 2000, 0, 0, 10), W("b", 1000, 0, 10, 20)]
    result = fair.fairness(spans, {"a": 1, "b": 1})
    a, b = _queue(result, "a"), _queue(result, "b")
    assert b.longest_starvation_seconds == 10.0
    assert result.longest_starvation_seconds == 10.0
    # 0-10: both active, shares a 1 / b 0 vs 1/2 each; 10-20: only b active, share 1 vs 1
    assert a.share_error == pytest.approx(0.5)
    assert b.share_error == pytest.approx((0.5 * 10 + 0 * 10) / 20)
    assert b.mean_share == pytest.approx(0.5) and b.mean_entitled_share == pytest.approx(0.75)
    assert a.mean_share == pytest.approx(1.0) and a.mean_entitled_share == pytest.approx(0.5)
    x = [1.0 / 0.5, 0.5 / 0.75]
    assert result.jain_index == pytest.approx(sum(x) ** 2 / (2 * sum(v * v for v in x)))
    assert result.share_error == pytest.approx((0.5 * 10 + 0.25 * 20) / 30)


def test_entitlements_weight_the_fair_share():
    # weights 3:1 and cpu in use 3:1: exactly fair
    spans = [W("a", 3000, 0, 0, 8), W("b", 1000, 0, 0, 8)]
    result = fair.fairness(spans, {"a": 3, "b": 1})
    assert result.share_error == pytest.approx(0.0)
    assert result.jain_index == pytest.approx(1.0)
    assert fair.fairness(spans, {}).share_error == pytest.approx(0.25)  # unlisted queues weigh 1


def test_a_queue_that_wants_nothing_is_owed_nothing():
    spans = [W("a", 1000, 0, 0, 10), W("idle", 1000, 20, 20, 30)]
    result = fair.fairness(spans, {"a": 1, "idle": 1})
    assert result.share_error == pytest.approx(0.0)
    # 10-20: nothing active, nothing measured
    assert _queue(result, "a").active_seconds == 10.0 and _queue(result, "idle").active_seconds == 10.0


def test_unfinished_and_never_admitted_workloads_are_closed_at_the_end():
    spans = [W("a", 1000, 0, 0, None), W("b", 1000, 5, None, None)]
    result = fair.fairness(spans, {"a": 1, "b": 1}, end=25)
    assert _queue(result, "b").longest_starvation_seconds == 20.0
    assert _queue(result, "a").active_seconds == 25.0
    assert _queue(result, "a").share_error == pytest.approx((0 * 5 + 0.5 * 20) / 25)


def test_starvation_is_the_longest_of_several_stretches():
    spans = [W("a", 1000, 0, 0, 100),
             W("b", 1000, 0, 3, 4), W("b", 1000, 10, 17, 18), W("b", 1000, 30, 31, 32)]
    assert _queue(fair.fairness(spans, {}), "b").longest_starvation_seconds == 7.0


def test_jain_index_bounds():
    assert fair.jain_index([1, 1, 1, 1]) == 1.0
    assert fair.jain_index([1, 0, 0, 0]) == 0.25
    assert fair.jain_index([]) is None and fair.jain_index([0, 0]) is None
    assert math.isclose(fair.jain_index([2, 1]), 9 / 10)


def test_no_workloads_gives_no_figures():
    result = fair.fairness([], {})
    assert result.queues == () and result.jain_index is None and result.share_error is None


def test_a_workload_gone_without_admission_stops_waiting_when_it_goes():
    spans = [W("a", 1000, 0, 0, 50), W("b", 1000, 0, None, 4)]
    assert _queue(fair.fairness(spans, {}), "b").longest_starvation_seconds == 4.0


def test_kueue_baseline_summary_carries_the_fairness_figures_of_its_case():
    import pandas as pd

    from harness.drivers.kueuebaseline import summarising

    columns = ["case", "cluster_queue", "cpu_milli", "created_s", "admitted_s", "finished_s"]
    frame = pd.DataFrame([("c1", "a", 2000, 0.0, 0.0, 10.0), ("c1", "b", 1000, 0.0, 10.0, 20.0),
                          ("c2", "b", 1000, 0.0, None, None)], columns=columns)
    metrics = {m.name: m for m in summarising.fairness_metrics(frame, "c1")}
    assert metrics["kueue.fairness.longest_starvation_seconds"].value == 10.0
    assert metrics["kueue.fairness.share_error"].value == pytest.approx((0.5 * 10 + 0.25 * 20) / 30)
    assert metrics["kueue.fairness.jain_index"].better == "higher"
    assert summarising.fairness_metrics(None, "c1") == []


def test_pools_divide_the_capacity():
    # a and b share cohort x fairly; c alone in y holds as much as both: fair within pools, not across
    spans = [W("a", 1000, 0, 0, 10), W("b", 1000, 0, 0, 10), W("c", 2000, 0, 0, 10)]
    pooled = fair.fairness(spans, {}, pools={"a": "x", "b": "x", "c": "y"})
    assert pooled.share_error == pytest.approx(0.0) and pooled.jain_index == pytest.approx(1.0)
    assert _queue(pooled, "c").mean_share == pytest.approx(1.0)
    one_pool = fair.fairness(spans, {})
    assert one_pool.share_error == pytest.approx((1 / 12 + 1 / 12 + 1 / 6) / 3)
    # a queue missing from pools is a pool of its own
    assert fair.fairness(spans, {}, pools={"a": "x", "b": "x"}).share_error == pytest.approx(0.0)


def test_the_summary_takes_cohorts_and_entitlements_from_the_table_when_it_has_them():
    import pandas as pd

    from harness.drivers.kueuebaseline import summarising

    columns = ["case", "cluster_queue", "cpu_milli", "created_s", "admitted_s", "finished_s", "cohort", "entitlement"]
    # a and b share cohort x 2:1 as entitled; c alone in y: exactly fair within cohorts
    frame = pd.DataFrame([("c1", "a", 2000, 0.0, 0.0, 10.0, "x", 2.0),
                          ("c1", "b", 1000, 0.0, 0.0, 10.0, "x", 1.0),
                          ("c1", "c", 5000, 0.0, 0.0, 10.0, "y", 1.0)], columns=columns)
    metrics = {m.name: m.value for m in summarising.fairness_metrics(frame, "c1")}
    assert metrics["kueue.fairness.share_error"] == pytest.approx(0.0)
    old = {m.name: m.value for m in summarising.fairness_metrics(frame.drop(columns=["cohort", "entitlement"]), "c1")}
    assert old["kueue.fairness.share_error"] > 0.1


def test_entitlements_are_weights_with_fair_sharing_else_nominal_quota():
    import pandas as pd

    from harness.drivers.kueuebaseline import tabulating
    from harness.scenarios import loading

    peers = loading.load(str(Path(__file__).parents[3] / "results/large-scale/kueue-large-scale-peers.yaml"))
    fair_case = next(c for c in peers.cases if "fair_sharing=True" in c.id).scenario
    classical = next(c for c in peers.cases if "fair_sharing=False" in c.id).scenario
    frame = pd.DataFrame({"cluster_queue": ["cq-0-0", "cq-3-h7"]})
    nominal = {"cq-0-0": 20_000, "cq-3-h7": 20_000}
    fair_rows = tabulating.with_entitlements(frame, fair_case, nominal)
    assert list(fair_rows["entitlement"]) == [1.0, 2.0] and list(fair_rows["cohort"]) == ["cohort-0", "cohort-3"]
    assert list(tabulating.with_entitlements(frame, classical, nominal)["entitlement"]) == [20.0, 20.0]
