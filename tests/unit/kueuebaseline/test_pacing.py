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
