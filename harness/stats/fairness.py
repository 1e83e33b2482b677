"""How fairly a run shared capacity between ClusterQueues, from its per-Workload table (pure).

Inputs are one record per Workload: its ClusterQueue, the cpu it holds while admitted (milli-cpu),
and when it was created, admitted and finished (seconds on one clock; None when it never was). A
Workload holds its cpu from admission to finish (to the end of the run when it never finished); one
that was evicted and admitted again is taken as holding from its last admission, what the table keeps.

Between two consecutive events (a creation, an admission, a finish) nothing changes, so every figure
is an exact sum over those intervals, no sampling step. At a time t:

- a ClusterQueue is *active* when it has a Workload created and not finished (pending or running);
- its *share* is its cpu in use over all ClusterQueues' cpu in use (0 when nothing runs: skipped);
- its *entitled share* is its entitlement (a weight: fairSharing.weight, or nominal quota) over the
  sum of the entitlements of the active ClusterQueues: what it would get if the capacity in use were
  divided among the queues that want some, in proportion to their entitlement (the fair share of a
  backlogged queue; a queue that wants nothing is owed nothing).
  "All" is the queue's pool when pools are given (its cohort: cohorts share no capacity).

Figures:

- ``share_error``: per ClusterQueue, the time-weighted mean of |share - entitled share| over the time
  it is active and something runs (0: always exactly its part);
- ``jain_index``: Jain's fairness index over ClusterQueues of x = (time-weighted mean share) /
  (time-weighted mean entitled share), both over its active time: (sum x)^2 / (n sum x^2), 1 when
  every queue got its part, 1/n when one queue got everything;
- ``starvation``: per ClusterQueue, the longest stretch during which it had a pending Workload and
  held no cpu at all (how long a starved queue waits).

Why shares of the cpu in use and not of the capacity: a queue that wants little leaves capacity
unused through no unfairness; compared with what is in use, a share error means another queue got
what this one was owed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkloadSpan:
    cluster_queue: str
    cpu_milli: int
    created: float
    admitted: float | None
    finished: float | None


@dataclass(frozen=True, slots=True)
class QueueFairness:
    cluster_queue: str
    active_seconds: float
    """Time with a Workload created and not finished."""
    mean_share: float
    """Time-weighted share of the cpu in use, over its active time while something ran."""
    mean_entitled_share: float
    share_error: float
    """Time-weighted mean |share - entitled share|, same time base."""
    longest_starvation_seconds: float


@dataclass(frozen=True, slots=True)
class Fairness:
    queues: tuple[QueueFairness, ...]
    jain_index: float | None
    """None when no queue was active while something ran."""
    share_error: float | None
    """Mean of the queues' share errors weighted by their active time."""
    longest_starvation_seconds: float


def jain_index(values: Iterable[float]) -> float | None:
    """(sum x)^2 / (n sum x^2); None for no values or all zero."""
    xs = list(values)
    squares = sum(x * x for x in xs)
    if not xs or squares == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * squares)


def fairness(spans: Iterable[WorkloadSpan], entitlements: Mapping[str, float], end: float | None = None,
             pools: Mapping[str, str] | None = None) -> Fairness:
    """The figures of the module docstring; ``end`` closes Workloads still running (default: the last event).
    ClusterQueues missing from ``entitlements`` weigh 1. ``pools`` (ClusterQueue -> pool, e.g. its
    cohort) divides the capacity: shares and entitled shares are taken within each pool (a queue not
    listed is a pool of its own); None: one pool."""
    spans = list(spans)
    events = sorted({t for s in spans for t in (s.created, s.admitted, s.finished) if t is not None})
    if end is None:
        end = events[-1] if events else 0.0
    events = [t for t in events if t <= end] + ([end] if not events or events[-1] < end else [])
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
    queues = tuple(QueueFairness(
        name, active_time[name],
        share_sum[name] / measured[name] if measured[name] else 0.0,
        entitled_sum[name] / measured[name] if measured[name] else 0.0,
        error_sum[name] / measured[name] if measured[name] else 0.0,
        longest[name]) for name in names)
    considered = [q for q in queues if measured[q.cluster_queue] and q.mean_entitled_share > 0]
    total_measured = sum(measured[q.cluster_queue] for q in considered)
    return Fairness(
        queues,
        jain_index(q.mean_share / q.mean_entitled_share for q in considered),
        sum(q.share_error * measured[q.cluster_queue] for q in considered) / total_measured if total_measured else None,
        max(longest.values(), default=0.0))
