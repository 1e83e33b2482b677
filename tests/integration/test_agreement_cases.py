"""The differential tester's cases, replayed against both implementations: the minimal cases that
once disagreed (tests/agreement_cases/*.yaml) and a small seeded sample of random ones.

All cases run side by side: one cluster and one run per implementation for the whole module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agreeing import cases, comparing, generating, rendering, running
from harness.progress import LineProgress
from harness.toolchain import building

from .conftest import unique_name

pytestmark = pytest.mark.integration

CASE_DIR = Path(__file__).resolve().parents[1] / "agreement_cases"
SAMPLE_SEEDS = (101, 104, 105)
"""A few random cases on every test run; the full search is a benchmark (results/agreement/). Two fair-sharing
settings only (101 and 104 share one, 105 has none, as the case files do): each setting is a cluster of
its own per implementation, one after the other. Seed 102 is
left out: two of its Workloads are admitted in the same second and Kueue's preemption then orders them
by a race (its cache holds the assumed object, with the exact time, until the API's echo, with whole
seconds, replaces it), so which one Kueue evicts changes from run to run."""


def _cases() -> list[tuple[str, cases.Case]]:
    found = [(path.stem, cases.load(path)) for path in sorted(CASE_DIR.glob("*.yaml"))]
    return found + [(f"seed-{seed}", generating.generate(seed)) for seed in SAMPLE_SEEDS]


CASES = _cases()


@pytest.fixture(scope="module")
def outcomes(binaries, state_dir, tmp_path_factory):
    building.ensure_kueue(LineProgress(interval=10.0))
    batch = {rendering.prefix_of(i): case for i, (_, case) in enumerate(CASES)}
    logs = tmp_path_factory.mktemp("agreement-logs")
    return {impl: running.run_batch(impl, batch, logs, unique_name(f"agree-test-{impl[:3]}"), say=print)
            for impl in running.IMPLEMENTATIONS}


@pytest.mark.parametrize("index", range(len(CASES)), ids=[name for name, _ in CASES])
def test_both_implementations_decide_alike(outcomes, index):
    _, case = CASES[index]
    prefix = rendering.prefix_of(index)
    ours, kueue = outcomes["reference"][prefix], outcomes["kueue"][prefix]
    assert ours.failure is None, ours.failure
    assert kueue.failure is None, kueue.failure
    assert len(ours.decisions) == len(kueue.decisions) == len(case.epochs)
    found = comparing.compare(case, ours.decisions, kueue.decisions)
    assert found.decisions > 0
    assert found.agrees, "\n".join(comparing.describe(d, "reference", "kueue") for d in found.differences[:15])


def _cpus(case: cases.Case, name: str) -> int:
    [pod_set] = next(w for w in case.workloads() if w.name == name).podSets
    return int(pod_set.requests["cpu"])


@pytest.mark.parametrize("name, best_on_demand", [("fifo-borrowing-head-7", 5), ("fifo-borrowing-head-6", 4)])
def test_the_fifo_borrowing_cases_exercise_what_they_claim(outcomes, name, best_on_demand):
    """What each case's header says the reference scheduler decides (Kueue must then agree, above)."""
    index = next(i for i, (n, _) in enumerate(CASES) if n == name)
    case, [decided] = CASES[index][1], outcomes["reference"][rendering.prefix_of(index)].decisions
    on_demand = [w for w, (cq, [(_, flavors)]) in decided.admitted.items()
                 if cq == "cq-best" and dict(flavors)["cpu"] == "on-demand"]
    assert sum(_cpus(case, w) for w in on_demand) == best_on_demand
    assert "w-03" in decided.pending["cq-best"], "BestEffortFIFO parks a head that does not fit"
    assert ("w-05" in decided.admitted) is (best_on_demand == 5), "and admits a later one that does, if quota is left"
    assert decided.pending["cq-strict"][0] == "w-10" and "w-08" in decided.pending["cq-strict"], \
        "StrictFIFO waits behind its big head although a 1-CPU Workload would fit"
