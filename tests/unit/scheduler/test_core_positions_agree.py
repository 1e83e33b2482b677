"""Property: the snapshot and indexed strategies give identical summaries, always.

Two managers, one per strategy, get the same random sequence of add / delete / cycle
(admit, park, preempt) / finish / evict-and-requeue / priority change / LocalQueue moves.
After every step, every ClusterQueue and LocalQueue summary, for every drawn page, and every
position must match between them and the reference order (a plain sort of the pending set).
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core import kinds
from scheduler.core.positions import make_item
from scheduler.core.queues import QueueManager
from scheduler.core.scheduling import run_cycle
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder

NAMES = [f"w{i}" for i in range(12)]
LOCAL_QUEUES = ["lq0", "lq1", "lq2", "lq3"]
CLUSTER_QUEUES = ["cq0", "cq1"]

operations = st.one_of(
    st.tuples(
        st.just("add"),
        st.sampled_from(NAMES),
        st.sampled_from(LOCAL_QUEUES),
        st.integers(0, 3),
        st.integers(0, 4),
        st.integers(1, 3),
    ),
    st.tuples(st.just("delete"), st.sampled_from(NAMES)),
    st.tuples(st.just("cycle")),
    st.tuples(st.just("finish"), st.sampled_from(NAMES)),
    st.tuples(st.just("evict"), st.sampled_from(NAMES), st.sampled_from(["Preempted", "PodsReadyTimeout"])),
    st.tuples(st.just("priority"), st.sampled_from(NAMES), st.integers(0, 3)),
    st.tuples(st.just("move"), st.sampled_from(LOCAL_QUEUES), st.sampled_from(CLUSTER_QUEUES)),
)
pages = st.lists(st.tuples(st.integers(0, 14), st.integers(0, 14)), min_size=1, max_size=4)


def _new_manager(positions: str) -> QueueManager:
    manager = QueueManager(positions=positions)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    manager.add_cluster_queue(
        ClusterQueueBuilder("cq0").flavors(("default", {"cpu": "3"})).cohort("co").preemption(within="LowerPriority").obj()
    )
    manager.add_cluster_queue(ClusterQueueBuilder("cq1").flavors(("default", {"cpu": "2"})).cohort("co").strict_fifo().obj())
    for i, lq in enumerate(LOCAL_QUEUES):
        manager.add_local_queue(kinds.LocalQueue("ns", lq, CLUSTER_QUEUES[i // 2]))
    return manager


def _apply(manager: QueueManager, op: tuple, now: float) -> list:
    kind = op[0]
    if kind == "add":
        _, name, lq, priority, created, cpu = op
        manager.add_workload(
            WorkloadBuilder(name).queue(lq).priority(priority).created(created).request(cpu=str(cpu)).obj()
        )
    elif kind == "delete":
        manager.delete_workload(("ns", op[1]))
    elif kind == "cycle":
        return [(type(d).__name__, d.workload.name) for d in run_cycle(manager, now)]
    elif kind == "finish":
        manager.mark_finished(("ns", op[1]))
    elif kind == "evict":
        manager.mark_evicted(("ns", op[1]), op[2], now)
    elif kind == "priority":
        current = manager.workload(("ns", op[1]))
        if current is not None and current.admission is None:
            manager.update_workload(
                WorkloadBuilder(op[1])
                .queue(current.queue_name)
                .priority(op[2])
                .created(current.creation_timestamp)
                .request(cpu="1")
                .obj()
            )
    elif kind == "move":
        manager.update_local_queue(kinds.LocalQueue("ns", op[1], op[2]))
    return []


def _reference_cluster_queue(manager: QueueManager, cq: str, offset: int, limit: int) -> list:
    limit = limit or 1000  # Kueue's default for a limit of 0
    ordered = manager.pending_lists.pending_in_order(cq)
    seen: dict = {}
    items = []
    for index, workload in enumerate(ordered):
        in_lq = seen.get(workload.local_queue, 0)
        seen[workload.local_queue] = in_lq + 1
        if offset <= index < offset + limit:
            items.append(make_item(workload, index, in_lq))
    return items


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(operations, max_size=40), page_list=pages)
def test_snapshot_and_indexed_agree(ops, page_list):
    snapshot, indexed = _new_manager("snapshot"), _new_manager("indexed")
    generations = {name: {cq: m.pending_lists.generation(cq) for cq in CLUSTER_QUEUES}
                   for name, m in (("snapshot", snapshot), ("indexed", indexed))}
    for step, op in enumerate(ops):
        now = 10.0 + step
        assert _apply(snapshot, op, now) == _apply(indexed, op, now)
        for cq in CLUSTER_QUEUES:
            # generations are unique per process, so compare whether each one moved, not its value
            moved = {}
            for name, manager in (("snapshot", snapshot), ("indexed", indexed)):
                moved[name] = manager.pending_lists.generation(cq) != generations[name][cq]
                generations[name][cq] = manager.pending_lists.generation(cq)
            assert moved["snapshot"] == moved["indexed"]
            for offset, limit in page_list:
                expected = _reference_cluster_queue(snapshot, cq, offset, limit)
                assert snapshot.summary_for_cluster_queue(cq, offset, limit) == expected
                assert indexed.summary_for_cluster_queue(cq, offset, limit) == expected
            for item in _reference_cluster_queue(snapshot, cq, 0, 1000):
                key = (item.namespace, item.name)
                expected_position = (item.position_in_cluster_queue, item.position_in_local_queue)
                assert snapshot.position_of(key) == indexed.position_of(key) == expected_position
        for lq in LOCAL_QUEUES:
            in_lq = [item for cq in CLUSTER_QUEUES for item in _reference_cluster_queue(snapshot, cq, 0, 1000)
                     if item.local_queue_name == lq]  # a LocalQueue is in one ClusterQueue at a time
            for offset, limit in page_list:
                expected = in_lq[offset:offset + (limit or 1000)]
                assert snapshot.summary_for_local_queue("ns", lq, offset, limit) == expected
                assert indexed.summary_for_local_queue("ns", lq, offset, limit) == expected
