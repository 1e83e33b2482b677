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

import numpy as np


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


CHUNK_CELLS = 4_000_000
"""Event rows x ClusterQueues held in memory at once per pool (a few arrays of this many numbers)."""


def fairness(spans: Iterable[WorkloadSpan], entitlements: Mapping[str, float], end: float | None = None,
             pools: Mapping[str, str] | None = None) -> Fairness:
    """The figures of the module docstring; ``end`` closes Workloads still running (default: the last event).
    ClusterQueues missing from ``entitlements`` weigh 1. ``pools`` (ClusterQueue -> pool, e.g. its
    cohort) divides the capacity: shares and entitled shares are taken within each pool (a queue not
    listed is a pool of its own); None: one pool.

    A pool's figures change only at its own events, so each pool is taken on its own, as arrays of its
    events x its queues (in chunks of events): 1,000 ClusterQueues and 150,000 events take seconds."""
    spans = list(spans)
    if end is None:
        end = max((t for s in spans for t in (s.created, s.admitted, s.finished) if t is not None), default=0.0)
    names = sorted({s.cluster_queue for s in spans})
    pool_of = {name: ("" if pools is None else pools.get(name, f"\0{name}")) for name in names}
    members: dict[str, list[str]] = {}
    for name in names:
        members.setdefault(pool_of[name], []).append(name)
    spans_of: dict[str, list[WorkloadSpan]] = {}
    for span in spans:
        spans_of.setdefault(pool_of[span.cluster_queue], []).append(span)
    sums: dict[str, tuple[float, float, float, float, float, float]] = {}
    for key, queue_names in members.items():
        weights = np.array([float(entitlements.get(name, 1.0)) for name in queue_names])
        for name, row in zip(queue_names, _pool_sums(spans_of[key], queue_names, weights, end)):
            sums[name] = row
    queues = tuple(QueueFairness(
        name, active, share / measured if measured else 0.0, entitled / measured if measured else 0.0,
        error / measured if measured else 0.0, longest)
        for name in names for active, measured, share, entitled, error, longest in [sums[name]])
    measured_of = {name: sums[name][1] for name in names}
    considered = [q for q in queues if measured_of[q.cluster_queue] and q.mean_entitled_share > 0]
    total_measured = sum(measured_of[q.cluster_queue] for q in considered)
    return Fairness(
        queues,
        jain_index(q.mean_share / q.mean_entitled_share for q in considered),
        sum(q.share_error * measured_of[q.cluster_queue] for q in considered) / total_measured if total_measured else None,
        max((q.longest_starvation_seconds for q in queues), default=0.0))


def _pool_sums(spans: list[WorkloadSpan], names: list[str], weights: np.ndarray, end: float) -> list[tuple]:
    """Per queue of one pool: (active seconds, measured seconds, share x time, entitled share x time,
    |error| x time, longest starvation), summed over the intervals between the pool's events up to ``end``."""
    times = np.array(sorted({t for s in spans for t in (s.created, s.admitted, s.finished)
                             if t is not None and t <= end} | {end}))
    column = {name: i for i, name in enumerate(names)}
    changes: list[tuple[float, int, int, int, int]] = []  # (time, queue, use, live, pending)
    for s in spans:
        q = column[s.cluster_queue]
        changes += [(s.created, q, 0, 1, 1), (s.finished, q, 0, -1, 0),
                    (s.admitted if s.admitted is not None else s.finished, q, 0, 0, -1)]
        if s.admitted is not None:
            changes += [(s.admitted, q, s.cpu_milli, 0, 0), (s.finished, q, -s.cpu_milli, 0, 0)]
    changes = [c for c in changes if c[0] is not None and c[0] <= end]
    table = np.array(changes, dtype=float).reshape(-1, 5)
    rows = np.searchsorted(times, table[:, 0])
    order = np.argsort(rows, kind="stable")
    rows, table = rows[order], table[order]
    width = len(names)
    state = np.zeros((3, width))  # use, live, pending after the previous chunk
    totals = np.zeros((5, width))  # active, measured, share, entitled, error (x time)
    since = np.full(width, np.nan)  # when each starving queue began to starve
    longest = np.zeros(width)
    starving_before = np.zeros(width, dtype=bool)
    intervals = np.append(np.diff(times), 0.0)  # from each event to the next; the last closes nothing
    step = max(1, CHUNK_CELLS // width)
    for first in range(0, len(times), step):
        last = min(first + step, len(times))
        lo, hi = np.searchsorted(rows, [first, last])
        deltas = np.zeros((3, last - first, width))
        for k in range(3):
            np.add.at(deltas[k], (rows[lo:hi] - first, table[lo:hi, 1].astype(int)), table[lo:hi, 2 + k])
        after = state[:, None, :] + np.cumsum(deltas, axis=1)
        state = after[:, -1, :]
        use, live, pending = after
        lengths = intervals[first:last]
        active = live > 0
        pool_use = use.sum(axis=1, keepdims=True)
        pool_weight = (active * weights).sum(axis=1, keepdims=True)
        counted = active & (pool_use > 0) & (pool_weight > 0)
        share = np.divide(use, pool_use, out=np.zeros_like(use), where=pool_use > 0)
        entitled = np.divide(np.broadcast_to(weights, use.shape), pool_weight, out=np.zeros_like(use),
                             where=pool_weight > 0)
        span = lengths[:, None]
        totals += [(active * span).sum(axis=0), (counted * span).sum(axis=0), (counted * share * span).sum(axis=0),
                   (counted * entitled * span).sum(axis=0), (counted * np.abs(share - entitled) * span).sum(axis=0)]
        starving = (pending > 0) & (use == 0)
        previous = np.vstack([starving_before, starving[:-1]])
        for row, q in zip(*np.nonzero(starving != previous)):  # row-major: each queue's changes in time order
            t = times[first + row]
            if starving[row, q]:
                since[q] = t
            else:
                longest[q] = max(longest[q], t - since[q])
                since[q] = np.nan
        starving_before = starving[-1]
    open_ = ~np.isnan(since)
    longest[open_] = np.maximum(longest[open_], end - since[open_])
    return [(*totals[:, q], longest[q]) for q in range(width)]
