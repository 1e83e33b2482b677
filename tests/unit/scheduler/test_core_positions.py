"""Ordering, visibility summaries and page validation, for both position strategies."""

import pytest

from scheduler.core import kinds
from scheduler.core.positions import (
    IndexedPositions,
    InvalidPageError,
    PageRequest,
    PositionRegistry,
    QueueNotFoundError,
    SnapshotPositions,
    default_registry,
)
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with

STRATEGIES = ["snapshot", "indexed"]


def _manager(positions):
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "1"})).obj()
    return manager_with(cq, local_queues={"a": "cq", "b": "cq"}, positions=positions)


@pytest.mark.parametrize("positions", STRATEGIES)
def test_order_is_priority_then_timestamp_then_uid(positions):
    manager = _manager(positions)
    manager.add_workload(WorkloadBuilder("old-low").queue("a").priority(0).created(10).obj())
    manager.add_workload(WorkloadBuilder("new-high").queue("b").priority(5).created(20).obj())
    manager.add_workload(WorkloadBuilder("tie-z").queue("a").created(15).uid("z").obj())
    manager.add_workload(WorkloadBuilder("tie-a").queue("b").created(15).uid("a").obj())
    # Expected: priority 5 first; then priority 0 by time 10, 15, 15 (uid a before z).
    items = manager.pending_lists.summary_for_cluster_queue("cq")
    assert [(i.name, i.position_in_cluster_queue, i.local_queue_name, i.position_in_local_queue) for i in items] == [
        ("new-high", 0, "b", 0),
        ("old-low", 1, "a", 0),
        ("tie-a", 2, "b", 1),
        ("tie-z", 3, "a", 1),
    ]


@pytest.mark.parametrize("positions", STRATEGIES)
@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [
        (0, 2, [("w0", 0, 0), ("w2", 2, 1)]),
        (1, 10, [("w2", 2, 1), ("w4", 4, 2)]),
        (3, 10, []),
        (0, 0, [("w0", 0, 0), ("w2", 2, 1), ("w4", 4, 2)]),  # limit 0 is Kueue's default, 1000
    ],
)
def test_local_queue_page(positions, offset, limit, expected):
    manager = _manager(positions)
    for i in range(5):  # even ones go to LocalQueue a
        manager.add_workload(WorkloadBuilder(f"w{i}").queue("a" if i % 2 == 0 else "b").created(i).obj())
    items = manager.pending_lists.summary_for_local_queue("ns", "a", offset, limit)
    assert [(i.name, i.position_in_cluster_queue, i.position_in_local_queue) for i in items] == expected


@pytest.mark.parametrize("positions", STRATEGIES)
def test_cluster_queue_page_counts_local_positions_from_before_the_page(positions):
    manager = _manager(positions)
    for i in range(6):
        manager.add_workload(WorkloadBuilder(f"w{i}").queue("a" if i < 4 else "b").created(i).obj())
    items = manager.pending_lists.summary_for_cluster_queue("cq", offset=3, limit=2)
    # w3 is the 4th of LocalQueue a; w4 the 1st of b.
    assert [(i.name, i.position_in_cluster_queue, i.position_in_local_queue) for i in items] == [
        ("w3", 3, 3),
        ("w4", 4, 0),
    ]
    assert manager.pending_lists.position_of(("ns", "w3")) == (3, 3)


@pytest.mark.parametrize("positions", STRATEGIES)
def test_item_shape_matches_kueue_visibility(positions):
    manager = _manager(positions)
    manager.add_workload(WorkloadBuilder("w").queue("a").priority(3).created(0).obj())
    (item,) = manager.pending_lists.summary_for_cluster_queue("cq")
    assert item.to_dict() == {
        "metadata": {"name": "w", "namespace": "ns", "creationTimestamp": "1970-01-01T00:00:00Z"},
        "priority": 3,
        "localQueueName": "a",
        "positionInClusterQueue": 0,
        "positionInLocalQueue": 0,
    }


@pytest.mark.parametrize(
    ("offset", "limit", "expected"),
    [
        (None, None, PageRequest(0, 1000)),
        ("5", "20", PageRequest(5, 20)),
        (0, 200_000, PageRequest(0, 100_000)),
        ("", "", PageRequest(0, 1000)),
        # Kueue defaults a limit of 0 as it defaults a missing one (SetDefaults_PendingWorkloadOptions).
        (0, 0, PageRequest(0, 1000)),
        ("3", "0", PageRequest(3, 1000)),
        ("0", "000", PageRequest(0, 1000)),
    ],
)
def test_page_defaults_and_clamp(offset, limit, expected):
    assert PageRequest.of(offset, limit) == expected


@pytest.mark.parametrize(
    ("offset", "limit", "message"),
    [
        (-1, 10, "offset must be a non-negative integer, got -1"),
        (0, "-5", "limit must be a non-negative integer, got '-5'"),
        ("1.5", 10, "offset must be a non-negative integer, got '1.5'"),
        (0, 2.0, "limit must be a non-negative integer, got 2.0"),
        (True, 1, "offset must be a non-negative integer, got True"),
        ("9" * 5000, 1, "offset must be a non-negative integer no larger than 9223372036854775807, got '" + "9" * 59 + "..."),
        (0, 2**63, "limit must be a non-negative integer no larger than 9223372036854775807, got 9223372036854775808"),
        (0, 2**200, "limit must be a non-negative integer no larger than 9223372036854775807, got a 201-bit number"),
    ],
)
def test_invalid_pages_raise_one_clear_line(offset, limit, message):
    with pytest.raises(InvalidPageError) as error:
        PageRequest.of(offset, limit)
    assert str(error.value) == message


@pytest.mark.parametrize("positions", STRATEGIES)
def test_unknown_queues_are_not_found(positions):
    manager = _manager(positions)
    with pytest.raises(QueueNotFoundError, match="clusterqueue nope not found"):
        manager.pending_lists.summary_for_cluster_queue("nope")
    with pytest.raises(QueueNotFoundError, match="localqueue ns/nope not found"):
        manager.pending_lists.summary_for_local_queue("ns", "nope")


def test_local_queue_without_cluster_queue_is_empty():
    manager = _manager("indexed")
    manager.add_local_queue(kinds.LocalQueue("ns", "orphan", "missing-cq"))
    manager.add_workload(WorkloadBuilder("w").queue("orphan").obj())
    assert manager.pending_lists.summary_for_local_queue("ns", "orphan") == []


def test_registry_is_explicit():
    registry = default_registry()
    assert registry.names() == ["indexed", "snapshot"]
    assert isinstance(registry.create("snapshot"), SnapshotPositions)
    assert isinstance(registry.create("indexed"), IndexedPositions)
    with pytest.raises(ValueError, match="unknown position strategy 'x'"):
        registry.create("x")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(IndexedPositions)
    assert PositionRegistry().names() == []


@pytest.mark.parametrize("positions", STRATEGIES)
def test_priority_change_moves_workload_and_bumps_generation(positions):
    manager = _manager(positions)
    manager.add_workload(WorkloadBuilder("first").queue("a").created(1).obj())
    manager.add_workload(WorkloadBuilder("second").queue("a").created(2).obj())
    before = manager.pending_lists.generation("cq")
    manager.update_workload(WorkloadBuilder("second").queue("a").created(2).priority(9).obj())
    assert manager.pending_lists.generation("cq") > before
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["second", "first"]
    # An update that changes nothing the queue cares about is not a change.
    same = manager.pending_lists.generation("cq")
    manager.update_workload(WorkloadBuilder("second").queue("a").created(2).priority(9).obj())
    assert manager.pending_lists.generation("cq") == same


@pytest.mark.parametrize("positions", STRATEGIES)
def test_moving_a_local_queue_moves_its_workloads(positions):
    other = ClusterQueueBuilder("other").flavors(("default", {"cpu": "1"})).obj()
    manager = _manager(positions)
    manager.add_cluster_queue(other)
    manager.add_workload(WorkloadBuilder("w").queue("a").obj())
    manager.update_local_queue(kinds.LocalQueue("ns", "a", "other"))
    assert manager.pending_lists.summary_for_cluster_queue("cq") == []
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("other")] == ["w"]
    manager.delete_local_queue("ns", "a")
    assert manager.pending_lists.summary_for_cluster_queue("other") == []
    manager.add_local_queue(kinds.LocalQueue("ns", "a", "cq"))
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq")] == ["w"]


def test_pending_by_local_queue_counts_every_pending_workload_once():
    from scheduler.core.queues import QueueManager
    from scheduler.core import conversion

    manager = QueueManager()
    manager.add_resource_flavor(conversion.resource_flavor_from_dict({"metadata": {"name": "f"}}))
    manager.add_cluster_queue(conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": {
        "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "f", "resources": [
            {"name": "cpu", "nominalQuota": "0"}]}]}]}}))
    for lq in ("a", "b"):
        manager.add_local_queue(conversion.local_queue_from_dict(
            {"metadata": {"name": lq, "namespace": "ns"}, "spec": {"clusterQueue": "cq"}}))
    for i in range(5):
        manager.add_workload(conversion.workload_from_dict({
            "metadata": {"name": f"w{i}", "namespace": "ns", "uid": str(i), "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"queueName": "a" if i < 3 else "b", "podSets": [{"name": "main", "count": 1, "template": {
                "spec": {"containers": [{"resources": {"requests": {"cpu": "1"}}}]}}}]}}))
    assert manager.pending_lists.pending_by_local_queue("cq") == {("ns", "a"): 3, ("ns", "b"): 2}
    assert sum(manager.pending_lists.pending_by_local_queue("cq").values()) == manager.pending_lists.pending_count("cq")


def test_the_pending_lists_answer_every_question_of_the_readers_interface_as_it_is_asked():
    # The visibility server and the publishers hold a pendingreading.PendingReader: every question of it is
    # a method of the pending lists the manager hands them, taking the same parameters with the same defaults.
    import inspect

    from scheduler.core.pendinglists import PendingLists
    from scheduler.core.pendingreading import PendingReader

    questions = [name for name, member in vars(PendingReader).items()
                 if inspect.isfunction(member) and not name.startswith("_")]
    assert questions
    for name in questions:
        asked = inspect.signature(getattr(PendingReader, name))
        answered = inspect.signature(getattr(PendingLists, name))
        assert [(p.name, p.default) for p in asked.parameters.values()] == [
            (p.name, p.default) for p in answered.parameters.values()], name
    manager = _manager("indexed")
    manager.add_workload(WorkloadBuilder("w").queue("a").obj())
    reader: PendingReader = manager.pending_lists
    assert reader.has_local_queue("ns", "a") and not reader.has_local_queue("ns", "nope")
    assert [i.name for i in reader.summary_for_local_queue("ns", "a")] == ["w"]
