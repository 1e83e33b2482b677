"""The ``simulator`` estimator on queues whose answers are computed by hand (in the comments).

Every case is one ClusterQueue "cq" (or two in a cohort) with 4 CPUs of nominal quota, the
snapshot taken at t=1000, runtimes declared per Workload unless the case is about their absence.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings, strategies as st

from scheduler.core import estimates, forecasting, runtimes, scheduling
from scheduler.core.queues import QueueManager
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with

NOW = 1000.0


def fifo_manager(strict: bool = False) -> QueueManager:
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"}))
    return manager_with((cq.strict_fifo() if strict else cq).obj())


def add_pending(manager: QueueManager, *specs: tuple[str, str, float]) -> None:
    """(name, cpu, created) each, priority 0."""
    for name, cpu, created in specs:
        manager.add_workload(WorkloadBuilder(name).request(cpu=cpu).created(created).obj())


def book(**seconds: float) -> runtimes.RuntimeBook:
    return runtimes.RuntimeBook(declared={("ns", name): s for name, s in seconds.items()})


def times(result: dict) -> dict[str, float | str]:
    """name -> admission time, or the reason when there is none."""
    return {key[1]: e.admission_at if e.admission_at is not None else e.reason for key, e in result.items()}


def simulate(manager: QueueManager, runtime_book: runtimes.RuntimeBook, now: float = NOW,
             **options) -> dict[str, float | str]:
    simulator = forecasting.Simulator(forecasting.SimulatorSettings(**options), runtime_book)
    return times(simulator.estimate(estimates.snapshot_of(manager, (), now)))


FOUR = (("a", "2", 1.0), ("b", "2", 2.0), ("c", "4", 3.0), ("d", "1", 4.0))
FOUR_RUNTIMES = book(a=100, b=50, c=30, d=10)


@pytest.mark.parametrize(("strict", "expected"), [
    # BestEffortFIFO, 4 CPUs:
    #   t=1000  a (2) and b (2) admitted: 4/4 used; c (4) and d (1) do not fit and are parked
    #   t=1050  b ends (1000+50): 2 free; c still does not fit, d (1) does: d admitted, 3/4 used
    #   t=1060  d ends (1050+10): 2 used; c does not fit
    #   t=1100  a ends (1000+100): 0 used; c admitted
    (False, {"a": 1000.0, "b": 1000.0, "c": 1100.0, "d": 1050.0}),
    # StrictFIFO: c blocks the queue, so d waits behind it:
    #   t=1000  a, b admitted; t=1050 b ends, c (4) does not fit in 2 free; t=1100 a ends, c admitted
    #   t=1130  c ends (1100+30): d admitted
    (True, {"a": 1000.0, "b": 1000.0, "c": 1100.0, "d": 1130.0}),
])
@pytest.mark.parametrize("park_equal_shapes", [True, False])
def test_fifo_queue_of_known_runtimes(strict: bool, expected: dict[str, float], park_equal_shapes: bool) -> None:
    manager = fifo_manager(strict)
    add_pending(manager, *FOUR)
    assert simulate(manager, FOUR_RUNTIMES, park_equal_shapes=park_equal_shapes) == expected


def test_running_workload_frees_its_quota_at_admission_plus_runtime() -> None:
    # r (4 CPUs) was admitted at t=900 and runs 150 s: it ends at 1050, when p (4 CPUs) fits.
    manager = fifo_manager()
    add_pending(manager, ("r", "4", 1.0))
    scheduling.run_cycle(manager, 900.0)
    add_pending(manager, ("p", "4", 2.0))
    assert simulate(manager, book(r=150, p=10)) == {"p": 1050.0}


def test_maximum_execution_time_is_the_runtime_when_nothing_is_declared() -> None:
    # r: maximumExecutionTimeSeconds 200 of which 50 were used in an earlier admission; admitted at
    # t=900, so it is deactivated at 900 + (200 - 50) = 1050, when p fits.
    manager = fifo_manager()
    running = WorkloadBuilder("r").request(cpu="4").created(1.0).obj()
    manager.add_workload(dataclasses.replace(running, max_execution_seconds=200, accumulated_execution_seconds=50))
    scheduling.run_cycle(manager, 900.0)
    pending = WorkloadBuilder("p").request(cpu="4").created(2.0).obj()
    manager.add_workload(dataclasses.replace(pending, max_execution_seconds=60))
    assert simulate(manager, runtimes.RuntimeBook()) == {"p": 1050.0}


def test_runtime_learned_per_class() -> None:
    # Finished Workloads of class ns/lq ran 80 s and 120 s: mean 100. r, admitted at 900, ends at
    # 900 + 100 = 1000, so p (4 CPUs) is admitted at 1000.
    learned = runtimes.learn([("ns/lq", 80.0), ("ns/lq", 120.0)])
    assert learned == {"ns/lq": 100.0}
    manager = fifo_manager()
    add_pending(manager, ("r", "4", 1.0))
    scheduling.run_cycle(manager, 900.0)
    add_pending(manager, ("p", "4", 2.0), ("q", "4", 3.0))
    # p at 1000 (r's end); q at 1100 (p's end: 1000 + its class's 100)
    assert simulate(manager, runtimes.RuntimeBook(learned=learned)) == {"p": 1000.0, "q": 1100.0}


def test_ordering_by_priority_as_the_core_orders() -> None:
    # low (priority 0) was created first, high (priority 10) later: the core takes high first.
    #   t=1000 high admitted (4/4); t=1100 high ends, low admitted.
    manager = fifo_manager()
    manager.add_workload(WorkloadBuilder("low").request(cpu="4").created(1.0).obj())
    manager.add_workload(WorkloadBuilder("high").priority(10).request(cpu="4").created(5.0).obj())
    assert simulate(manager, book(low=100, high=100)) == {"high": 1000.0, "low": 1100.0}


def test_cohort_borrowing() -> None:
    # cq-a and cq-b have 2 CPUs each in cohort "co"; cq-b is idle.
    #   t=1000  a1 (3 CPUs) borrows 1 from cq-b: 3/4 of the cohort used; a2 (2) does not fit (5 > 4)
    #   t=1060  a1 ends (1000+60): a2 admitted within cq-a's own 2
    manager = manager_with(
        ClusterQueueBuilder("cq-a").cohort("co").flavors(("default", {"cpu": "2"})).obj(),
        ClusterQueueBuilder("cq-b").cohort("co").flavors(("default", {"cpu": "2"})).obj(),
        local_queues={"lq": "cq-a", "lq-b": "cq-b"},
    )
    add_pending(manager, ("a1", "3", 1.0), ("a2", "2", 2.0))
    assert simulate(manager, book(a1=60, a2=60)) == {"a1": 1000.0, "a2": 1060.0}


def test_no_runtime_gives_no_time_in_its_cohort_tree_only() -> None:
    # r (4 CPUs in cq) runs with no runtime known: p behind it cannot be timed. cq-other, not in a
    # cohort with cq, is untouched: o is admitted at once (1000).
    manager = manager_with(
        ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj(),
        ClusterQueueBuilder("cq-other").flavors(("default", {"cpu": "4"})).obj(),
        local_queues={"lq": "cq", "lq-other": "cq-other"},
    )
    add_pending(manager, ("r", "4", 1.0))
    scheduling.run_cycle(manager, 900.0)
    add_pending(manager, ("p", "4", 2.0))
    manager.add_workload(WorkloadBuilder("o").queue("lq-other").request(cpu="4").created(3.0).obj())
    assert simulate(manager, book(p=10, o=10)) == {"p": estimates.NO_RUNTIME, "o": 1000.0}


def test_own_runtime_unknown() -> None:
    # a (no runtime) and b (2 CPUs each) are admitted at 1000; c (4) could only follow a's end.
    manager = fifo_manager()
    add_pending(manager, ("a", "2", 1.0), ("b", "2", 2.0), ("c", "4", 3.0))
    runtime_book = book(b=50, c=10)
    # By default a itself is marked too; c's time depends on a's end: no time.
    assert simulate(manager, runtime_book) == {"a": estimates.NO_RUNTIME, "b": 1000.0, "c": estimates.NO_RUNTIME}
    # Its own admission does not depend on its runtime: asked, it gets its time (1000).
    assert simulate(manager, runtime_book, require_own_runtime=False) == {
        "a": 1000.0, "b": 1000.0, "c": estimates.NO_RUNTIME}


def test_never_fits_is_said_so() -> None:
    # 8 CPUs in a 4-CPU queue: the forecast ends with it pending.
    manager = fifo_manager()
    add_pending(manager, ("big", "8", 1.0))
    assert simulate(manager, book(big=10)) == {"big": estimates.NOT_ADMITTED}


def test_over_budget_in_cycles() -> None:
    # One cycle takes one head per ClusterQueue: two cycles admit a and b (1000), then the budget is out.
    manager = fifo_manager()
    add_pending(manager, *FOUR)
    assert simulate(manager, FOUR_RUNTIMES, max_cycles=2) == {
        "a": 1000.0, "b": 1000.0, "c": estimates.BEYOND_BUDGET, "d": estimates.BEYOND_BUDGET}


class Ticks:
    """A CPU clock that moves ``step`` seconds each time it is read."""

    def __init__(self) -> None:
        self.t = 0.0
        self.step = 0.0

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_over_budget_in_cpu_serves_the_previous_estimate_with_its_age() -> None:
    manager = fifo_manager()
    add_pending(manager, *FOUR)
    clock = Ticks()
    simulator = forecasting.Simulator(forecasting.SimulatorSettings(max_cpu_seconds=2.5), FOUR_RUNTIMES, clock)
    first = simulator.estimate(estimates.snapshot_of(manager, (), NOW))
    assert times(first) == {"a": 1000.0, "b": 1000.0, "c": 1100.0, "d": 1050.0}  # the clock stood still
    # Ten seconds later the clock moves 1 s a read: read at the start (stop at 2.5), then before each
    # cycle: 1 and 2 let two cycles run (a, b at 1010), 3 is past the budget.
    clock.step = 1.0
    second = simulator.estimate(estimates.snapshot_of(manager, (), NOW + 10))
    assert times(second) == {"a": 1010.0, "b": 1010.0, "c": 1100.0, "d": 1050.0}
    c = second[("ns", "c")]
    assert (c.computed_at, c.served_at, c.age) == (1000.0, 1010.0, 10.0)
    assert second[("ns", "a")].age == 0.0


def test_preemption_evicts_at_once_and_the_victim_queues_again() -> None:
    # cq preempts lower priority within itself. low (4 CPUs, 500 s) runs since 900, so it would end at
    # 1400; high (4 CPUs, 50 s) arrives:
    #   t=1000  high preempts low (evicted at once), then is admitted; low queues again
    #   t=1050  high ends: low admitted again (to run its whole 500 s again)
    manager = manager_with(
        ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority").obj())
    add_pending(manager, ("low", "4", 1.0))
    scheduling.run_cycle(manager, 900.0)
    manager.add_workload(WorkloadBuilder("high").priority(10).request(cpu="4").created(2.0).obj())
    assert simulate(manager, book(low=500, high=50)) == {"high": 1000.0}
    forecast = forecasting.forecast(estimates.snapshot_of(manager, (), NOW).world, NOW, book(low=500, high=50),
                                    forecasting.SimulatorSettings())
    assert forecast.admitted_at == {("ns", "high"): 1000.0, ("ns", "low"): 1050.0}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 500)), min_size=1, max_size=8))
def test_whole_queue_workloads_run_one_after_another(specs: list[tuple[int, int]]) -> None:
    # Each Workload asks for all 4 CPUs, so they run one at a time in the core's order (priority, then
    # creation): the k-th is admitted when the runtimes of those before it have passed.
    manager = fifo_manager()
    declared = {}
    for i, (priority, runtime) in enumerate(specs):
        manager.add_workload(WorkloadBuilder(f"w{i}").priority(priority).request(cpu="4").created(float(i)).obj())
        declared[("ns", f"w{i}")] = float(runtime)
    expected, t = {}, NOW
    for i in sorted(range(len(specs)), key=lambda i: (-specs[i][0], i)):
        expected[f"w{i}"] = t
        t += specs[i][1]
    assert simulate(manager, runtimes.RuntimeBook(declared=declared)) == expected
