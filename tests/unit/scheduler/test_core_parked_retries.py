"""When a change of capacity returns parked workloads (Kueue's QueueInadmissibleWorkloads through its
delaying work queue, pkg/cache/queue/inadmissible_workloads.go): at once without a batch period, else
timed at the first call after the change, due a batch period later, later changes folded into it."""

import pytest

from scheduler.core.kinds import QueueingStrategy
from scheduler.core.parkedretries import ParkedRetries
from scheduler.core.pendingqueues import PendingQueue
from scheduler_builders import WorkloadBuilder

CHANGE = "change"

CASES = {
    # name: (batch seconds, steps: CHANGE or the time of a retry_due call, still parked, retry waiting,
    #        next retry at)
    "without a batch period, at the change itself": (0.0, [CHANGE], False, False, None),
    "asked for, not yet timed": (1.0, [CHANGE], True, True, None),
    "timed at the first call after the change": (1.0, [CHANGE, 10.0], True, True, 11.0),
    "due a batch period later": (1.0, [CHANGE, 10.0, 11.0], False, False, None),
    "a later change folds into the waiting retry": (1.0, [CHANGE, 10.0, CHANGE, 10.5], True, True, 11.0),
    "no change, no retry": (1.0, [10.0, 20.0], True, False, None),
}


@pytest.mark.parametrize("batch, steps, parked, waiting, next_at", CASES.values(), ids=CASES.keys())
def test_parked_workloads_come_back(batch, steps, parked, waiting, next_at):
    queue = PendingQueue("cq", QueueingStrategy.BEST_EFFORT_FIFO)
    workload = WorkloadBuilder("w").queue("lq").obj()
    queue.add(workload)
    queue.park(workload.key)
    retries = ParkedRetries({"cq": queue}, lambda name: None, batch)
    for step in steps:
        if step == CHANGE:
            retries.capacity_changed(["cq", "gone"])  # a queue that does not exist is passed over
        else:
            retries.retry_due(step)
    assert queue.is_parked(workload.key) is parked
    assert retries.waiting() is waiting
    assert retries.next_retry_at() == next_at


def test_a_change_offers_a_blocked_head_again_at_once():
    queue = PendingQueue("cq", QueueingStrategy.STRICT_FIFO)
    workload = WorkloadBuilder("w").queue("lq").obj()
    queue.add(workload)
    queue.block(workload.key)
    assert queue.head() is None
    ParkedRetries({"cq": queue}, lambda name: None, 1.0).capacity_changed(["cq"])
    assert queue.head() is workload
