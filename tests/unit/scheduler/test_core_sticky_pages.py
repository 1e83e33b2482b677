"""A page of the order with the sticky Workload first, built from pages of the order without it,
equals the same page cut from that order written out in full."""

from hypothesis import given, settings, strategies as st

from scheduler.core import stickypages
from scheduler.core.positions import PageRequest, PendingWorkloadItem

LOCAL_QUEUES = ("lq0", "lq1", "lq2")


def _items(local_queues: list[str]) -> list[PendingWorkloadItem]:
    """Workloads w0, w1, ... in this order, with their positions in the ClusterQueue and their LocalQueue."""
    seen: dict[str, int] = {}
    items = []
    for index, lq in enumerate(local_queues):
        items.append(PendingWorkloadItem(f"w{index}", "ns", "", 0, lq, index, seen.get(lq, 0)))
        seen[lq] = seen.get(lq, 0) + 1
    return items


def _natural_page(items, local_queue=None):
    def natural(request: PageRequest):
        chosen = [item for item in items if local_queue is None or item.local_queue_name == local_queue[1]]
        return chosen[request.offset:request.offset + request.limit]
    return natural


@settings(max_examples=200, deadline=None)
@given(local_queues=st.lists(st.sampled_from(LOCAL_QUEUES), min_size=1, max_size=12), data=st.data())
def test_a_page_with_the_sticky_first_is_cut_from_the_moved_order(local_queues, data):
    natural = _items(local_queues)
    sticky = natural[data.draw(st.integers(0, len(natural) - 1))]
    moved = _items([sticky.local_queue_name] + [item.local_queue_name for item in natural if item is not sticky])
    names = [sticky.name] + [item.name for item in natural if item is not sticky]
    moved = [PendingWorkloadItem(name, "ns", "", 0, item.local_queue_name, item.position_in_cluster_queue,
                                 item.position_in_local_queue) for name, item in zip(names, moved, strict=True)]
    for offset in range(len(natural) + 2):
        for limit in range(1, len(natural) + 2):
            request = PageRequest(offset, limit)
            assert stickypages.page(_natural_page(natural), sticky, request) == moved[offset:offset + limit]
            for lq in LOCAL_QUEUES:
                in_lq = [item for item in moved if item.local_queue_name == lq]
                got = stickypages.page(_natural_page(natural, ("ns", lq)), sticky, request, ("ns", lq))
                assert got == in_lq[offset:offset + limit]
    by_name = {item.name: item for item in moved}
    for item in natural:
        assert stickypages.moved(item, sticky) == by_name[item.name]
