"""Fairness figures from a run's per-Workload spans, on cases worked out by hand, and against a plain loop
over every event on random runs."""

import math
import random
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


def _loop_fairness(spans, entitlements, end: float | None = None,
             pools=None):
    """The figures as one loop over every event and every queue (the first implementation, kept as the oracle)."""
    spans = list(spans)
    events = sorted({t for s in spans for t in (s.created, s.admitted, s.finished) if t is not None})
    if end is None:
        end = events[-1] if events else 0.0
    # (the first implementation compared the unfiltered last event with end here, and so dropped the stretch
    # from the last event before an earlier end to that end; the summaries never passed an end)
    events = [t for t in events if t <= end]
    events += [end] if not events or events[-1] < end else []
    names = sorted({s.cluster_queue for s in spans})
    weight = {name: float(entitlements.get(name, 1.0)) for name in names}
    pool = {name: ("" if pools is None else pools.get(name, f"\0{name}")) for name in names}
    # per interval deltas, applied at event times
    delta_use: dict[float, dict[str, int]] = {}
    delta_live: dict[float, dict[str, int]] = {}
    delta_pending: dict[float, dict[str, int]] = {}

    def add(table: dict[float, dict[str, int]], t: float | None, name: str, value: int) -> None:
        if t is not None and t <= end:
            row = table.setdefault(t, {})
            row[name] = row.get(name, 0) + value

    for s in spans:
        add(delta_live, s.created, s.cluster_queue, 1)
        add(delta_live, s.finished, s.cluster_queue, -1)
        add(delta_pending, s.created, s.cluster_queue, 1)
        add(delta_pending, s.admitted if s.admitted is not None else s.finished, s.cluster_queue, -1)
        if s.admitted is not None:
            add(delta_use, s.admitted, s.cluster_queue, s.cpu_milli)
            add(delta_use, s.finished, s.cluster_queue, -s.cpu_milli)
    use = dict.fromkeys(names, 0)
    live = dict.fromkeys(names, 0)
    pending = dict.fromkeys(names, 0)
    active_time = dict.fromkeys(names, 0.0)
    measured = dict.fromkeys(names, 0.0)
    share_sum = dict.fromkeys(names, 0.0)
    entitled_sum = dict.fromkeys(names, 0.0)
    error_sum = dict.fromkeys(names, 0.0)
    starving_since: dict[str, float] = {}
    longest = dict.fromkeys(names, 0.0)
    for index, t in enumerate(events):
        for table, state in ((delta_use, use), (delta_live, live), (delta_pending, pending)):
            for name, value in table.get(t, {}).items():
                state[name] += value
        for name in names:
            starving = pending[name] > 0 and use[name] == 0
            if starving and name not in starving_since:
                starving_since[name] = t
            elif not starving and name in starving_since:
                longest[name] = max(longest[name], t - starving_since.pop(name))
        if index + 1 == len(events):
            break
        length = events[index + 1] - t
        active = [name for name in names if live[name] > 0]
        pool_use: dict[str, int] = {}
        pool_weight: dict[str, float] = {}
        for name in names:
            pool_use[pool[name]] = pool_use.get(pool[name], 0) + use[name]
        for name in active:
            pool_weight[pool[name]] = pool_weight.get(pool[name], 0.0) + weight[name]
        for name in active:
            active_time[name] += length
            total_use, total_weight = pool_use[pool[name]], pool_weight[pool[name]]
            if total_use == 0 or total_weight == 0:
                continue
            share, entitled = use[name] / total_use, weight[name] / total_weight
            measured[name] += length
            share_sum[name] += share * length
            entitled_sum[name] += entitled * length
            error_sum[name] += abs(share - entitled) * length
    for name, since in starving_since.items():
        longest[name] = max(longest[name], end - since)
    queues = tuple(fair.QueueFairness(
        name, active_time[name],
        share_sum[name] / measured[name] if measured[name] else 0.0,
        entitled_sum[name] / measured[name] if measured[name] else 0.0,
        error_sum[name] / measured[name] if measured[name] else 0.0,
        longest[name]) for name in names)
    considered = [q for q in queues if measured[q.cluster_queue] and q.mean_entitled_share > 0]
    total_measured = sum(measured[q.cluster_queue] for q in considered)
    return fair.Fairness(
        queues,
        fair.jain_index(q.mean_share / q.mean_entitled_share for q in considered),
        sum(q.share_error * measured[q.cluster_queue] for q in considered) / total_measured if total_measured else None,
        max(longest.values(), default=0.0))


def _random_spans(rng: random.Random, queues: int, workloads: int) -> list:
    spans = []
    for _ in range(workloads):
        created = round(rng.uniform(0, 100), rng.choice([0, 1, 3]))
        admitted = None if rng.random() < 0.15 else round(created + rng.uniform(0, 30), rng.choice([0, 2]))
        start = admitted if admitted is not None else created
        finished = None if rng.random() < 0.1 else round(start + rng.uniform(0, 40), 1)
        spans.append(W(f"cq-{rng.randrange(queues)}", rng.choice([500, 1000, 4000]), created, admitted, finished))
    return spans


@pytest.mark.parametrize("seed", range(12))
def test_the_pooled_arrays_give_what_a_loop_over_every_event_gives(seed, monkeypatch):
    rng = random.Random(seed)
    queues = rng.choice([1, 3, 12])
    spans = _random_spans(rng, queues, rng.choice([5, 60, 300]))
    entitlements = {f"cq-{q}": rng.choice([1.0, 2.0, 0.5]) for q in range(queues) if rng.random() < 0.8}
    pools = None if seed % 3 == 0 else {f"cq-{q}": f"cohort-{q % 3}" for q in range(queues) if q != 1}
    end = None if seed % 2 else 90.0
    monkeypatch.setattr(fair, "CHUNK_CELLS", rng.choice([1, 7, 10**6]))  # chunk edges fall anywhere
    got, want = fair.fairness(spans, entitlements, end, pools), _loop_fairness(spans, entitlements, end, pools)
    assert [q.cluster_queue for q in got.queues] == [q.cluster_queue for q in want.queues]
    for mine, theirs in zip(got.queues, want.queues):
        for field in ("active_seconds", "mean_share", "mean_entitled_share", "share_error", "longest_starvation_seconds"):
            assert getattr(mine, field) == pytest.approx(getattr(theirs, field), rel=1e-9, abs=1e-9), field
    for field in ("jain_index", "share_error", "longest_starvation_seconds"):
        assert getattr(got, field) == pytest.approx(getattr(want, field), rel=1e-9, abs=1e-9), field
