"""The differential tester's lifecycle families, scaled down: a few generated cases of each (execution limits,
waitForPodsReady timeouts with backoff, admission checks with Retry and Rejected) through the reference
scheduler and the pinned Kueue, every decision compared, deactivations, requeue counts and check states with
them. The full runs are results/agreement/lifecycle-*/.

All cases run side by side: one scenario run (cluster, scheduler) per implementation for the cases without
waitForPodsReady, and one per waitForPodsReady setting among the others (a setting of the scheduler).
"""

from __future__ import annotations

import pytest

from harness.agreeing import comparing, generating, rendering
from harness.cli import agree
from harness.drivers.agreement import batching, settings
from harness.progress import LineProgress
from harness.toolchain import building, versions

from .conftest import unique_name

pytestmark = [pytest.mark.integration, pytest.mark.nightly]  # minutes: the timed steps are waited out

SEEDS = {generating.LIMITS: (1, 2), generating.PODS_READY: (1, 5), generating.CHECKS: (1, 2)}
"""Seeds whose cases carry each family's marks (limited Workloads; ready and never-ready ones; Retry and Rejected
rules). The six agreed entirely with Kueue v0.19.2 in a trial run (the pods-ready two under an earlier setting,
backoffLimitCount 1 instead of 2), and with the pinned Kueue (v0.17.0) with the runner's closed-gate rounds
(6 passed in 13 minutes on two cores)."""
CASES = [(family, seed, generating.generate(seed, frozenset({family}))) for family, seeds in SEEDS.items()
         for seed in seeds]
VERSION = versions.load_pins().kueue


@pytest.fixture(scope="module")
def outcomes(binaries, state_dir, tmp_path_factory):
    runs = tmp_path_factory.mktemp("agreement-lifecycle-runs")
    building.ensure_kueue(LineProgress(interval=10.0), version=VERSION)
    batch = {rendering.prefix_of(i): case for i, (_, _, case) in enumerate(CASES)}
    run_batch = agree.batch_runner(runs, settings.KueueOptions(version=VERSION))
    return {impl: {prefix: outcome for n, part in enumerate(batching.by_setting(batch))
                   for prefix, outcome in run_batch(impl, part, unique_name(f"agree-life-{impl[:3]}-{n}")).items()}
            for impl in settings.IMPLEMENTATIONS}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{family}-seed-{seed}" for family, seed, _ in CASES])
def test_both_implementations_decide_alike_through_the_lifecycle(outcomes, index):
    family, _, case = CASES[index]
    ours = outcomes["reference"][rendering.prefix_of(index)]
    theirs = outcomes["kueue"][rendering.prefix_of(index)]
    assert ours.failure is None, ours.failure
    assert theirs.failure is None, theirs.failure
    assert len(ours.decisions) == len(theirs.decisions) == len(case.epochs)
    found = comparing.compare(case, ours.decisions, theirs.decisions)
    assert found.agrees, "\n".join(comparing.describe(d, "reference", "kueue") for d in found.differences[:15])
    last = ours.decisions[-1]
    if family == generating.PODS_READY:
        assert last.deactivated or any(d.requeues for d in ours.decisions), "no Workload timed out"
    if family == generating.CHECKS:
        assert last.checks, "no check state read"
    if family == generating.LIMITS:
        assert any(reason == "DeactivatedDueToMaximumExecutionTimeExceeded" for reason in last.deactivated.values())
