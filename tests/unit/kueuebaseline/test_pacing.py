"""Kueue's baseline in process: the same core at two paces. The slower scheduler finds room more often,
so it evicts fewer; every Workload still runs to its end."""

from harness.drivers.kueuebaseline import pacing
from harness.scenarios import loading

COUNTS = (60, 20, 10)
"""Workloads per ClusterQueue of each class: one cohort of Kueue's baseline, cut down."""


def _run(cycle_seconds: float, write_seconds: float = 0.0) -> pacing.Outcome:
    scenario = loading.load("results/peer/kueue-baseline-1cohort-peers.yaml").scenario
    mix = [m.model_copy(update={"count": count}) for m, count in zip(scenario.load.mix, COUNTS, strict=True)]
    scenario = scenario.model_copy(update={"load": scenario.load.model_copy(update={"mix": mix})})
    return pacing.run(scenario, pacing.Pace(cycle_seconds=cycle_seconds, write_seconds=write_seconds))


def test_a_slower_pace_evicts_fewer_with_the_same_decisions():
    fast, slow = _run(0.002), _run(0.15)
    assert fast.complete and slow.complete
    assert fast.admissions - fast.evictions == slow.admissions - slow.evictions == 6 * sum(COUNTS)
    assert slow.evictions < fast.evictions, (slow.evictions, fast.evictions)
    assert slow.cycles < fast.cycles


def test_pending_reasons_are_counted_only_when_written():
    assert _run(0.003).pending_writes == 0
    written = _run(0.003, write_seconds=0.004)
    assert written.pending_writes > 0 and written.complete


def test_a_profile_is_each_buckets_share_at_its_midpoint():
    profile = pacing.profile_of({0.005: 6.0, 0.01: 6.0, 0.1: 8.0, 1.0: 10.0})
    assert profile == ((0.0025, 0.6), (0.055, 0.2), (0.55, 0.2))  # the empty 5-10 ms bucket is left out


def test_a_profile_paces_the_run_like_its_mean():
    profiled = pacing.run(loading.load("results/peer/kueue-baseline-1cohort-peers.yaml").scenario,
                          pacing.Pace(profile=((0.05, 0.5), (0.15, 0.5))), bound_seconds=5.0)
    assert profiled.cycles > 10
    assert 0.05 <= profiled.wall_seconds / profiled.cycles <= 0.2


def test_heads_are_counted_by_what_the_cycle_decided():
    outcome = _run(0.002)
    assert outcome.heads >= outcome.admissions + outcome.preempting_heads + outcome.parked_heads
    assert outcome.preempting_heads > 0 and outcome.parked_heads > 0
