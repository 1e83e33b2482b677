"""The held-queue driver's numbers (pure): latencies to quantiles, counters to per-unit costs, bounded waits.

One phase gives latencies per read arm, counters read before and after a window, process samples and
milestones; this module turns them into the figures the tables hold. The ratios ours / Kueue are taken
from those tables by `summarising` (harness.drivers.peers finds Kueue's case of the same run).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

from harness.implementations import names
from harness.metrics import catalog
from harness.stats import intervals

MUTATING_VERBS = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})
"""apiserver_request_total verbs that write to etcd (APPLY: server-side apply)."""
SOURCES = {names.REFERENCE: catalog.SCHEDULER, names.KUEUE: catalog.KUEUE}
"""The metrics source of each implementation's /metrics (catalog's names are keyed by it)."""
STATUS_WRITES_PER_PENDING = {names.REFERENCE: 0, names.KUEUE: 1}
"""Status writes an implementation makes to each Workload it finds pending (Kueue before v0.18: the
QuotaReserved=False/Pending condition; ours publishes positions through its own API only)."""


def quantile(values: Sequence[float], q: float) -> float:
    """Nearest-rank q-quantile (as the benchmark this driver replaced took it, so figures stay comparable)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@dataclass(frozen=True, slots=True)
class Latencies:
    """One read arm's requests: how many, how fast, and their quantiles in ms (None: none answered)."""

    requests: int
    per_second: float
    p50_ms: float | None = None
    p90_ms: float | None = None
    p99_ms: float | None = None
    """None also with fewer than 100 requests: a p99 of them would be their slowest (`max_ms`)."""
    max_ms: float | None = None
    mean_ms: float | None = None


def latency_summary(latencies: Sequence[float], seconds: float) -> Latencies:
    """Requests, rate and quantiles (ms) of one read arm over the `seconds` its requests took."""
    if not latencies:
        return Latencies(0, 0.0)
    ms = [v * 1e3 for v in latencies]
    p99 = round(quantile(ms, 0.99), 2) if intervals.has_quantile(0.99, len(ms)) else None
    return Latencies(len(ms), round(len(ms) / seconds, 1), round(quantile(ms, 0.5), 2), round(quantile(ms, 0.9), 2),
                     p99, round(max(ms), 2), round(statistics.fmean(ms), 2))


def apiserver_writes(text: str) -> dict[str, float]:
    """Mutating requests kube-apiserver served so far, by resource[/subresource] (all clients)."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name != "apiserver_request_total" or sample.labels.get("verb") not in MUTATING_VERBS:
                continue
            resource = sample.labels.get("resource", "")
            if sample.labels.get("subresource"):
                resource += "/" + sample.labels["subresource"]
            out[resource] = out.get(resource, 0.0) + sample.value
    return out


def less_fill(writes: Mapping[str, float], posted: int) -> dict[str, float]:
    """Writes over a fill window less the fill's own: namespaces (nothing else creates one there) and the
    `posted` Workload creations (0 when written straight into etcd); what is left is the scheduler's doing."""
    out = {k: v for k, v in writes.items() if k != "namespaces"}
    if "workloads" in out:
        out["workloads"] = max(0.0, out["workloads"] - posted)
    return {k: v for k, v in out.items() if v > 0}


def delta(after: Mapping[str, float], before: Mapping[str, float]) -> dict[str, float]:
    """Per-key growth between two counter readings (keys that did not grow are left out)."""
    return {k: after[k] - before.get(k, 0.0) for k in sorted(after) if after[k] - before.get(k, 0.0) > 0}


def per(total: float, count: float, digits: int = 3) -> float | None:
    return round(total / count, digits) if count else None


@dataclass(frozen=True, slots=True)
class Milestone:
    """A bounded wait: reached or not, when, and where it stood when it stopped."""

    name: str
    target: int
    reached: bool
    seconds: float
    """Until reached, or until the bound when not."""
    done: float
    """How far it got (e.g. Workloads processed or admitted) when it stopped."""
    rate_per_second: float
    estimated_seconds: float | None
    """Not reached: seconds to the target at the rate seen so far (None when nothing moved)."""

    @property
    def seconds_or_estimate(self) -> float | None:
        """Seconds to the target: measured when reached, else the estimate (so a slow one is not flattered)."""
        return self.seconds if self.reached else self.estimated_seconds


def milestone(name: str, target: int, samples: Sequence[tuple[float, float]], reached: bool) -> Milestone:
    """From (seconds since start, progress) samples of a bounded wait."""
    seconds, done = samples[-1] if samples else (0.0, 0.0)
    rate = done / seconds if seconds > 0 else 0.0
    estimate = None if reached or rate <= 0 else round(target / rate, 1)
    return Milestone(name, target, reached, seconds, done, round(rate, 2), estimate)


@dataclass(frozen=True, slots=True)
class ChurnCounts:
    """What the churn of a read arm managed: creates, deletes and failures over its `seconds`."""

    asked_per_second: float
    created: int
    deleted: int
    failed: int
    seconds: float

    @property
    def changes_per_second(self) -> float:
        return round((self.created + self.deleted) / self.seconds, 1) if self.seconds > 0 else 0.0


def ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or theirs == 0:
        return None
    return round(ours / theirs, 4)


GOALS = {
    "page_p99_ms[cq_page_churn]": ("<=", 0.1),
    "admissions_per_second": (">=", 1.0),
}
"""Goals on ours / Kueue's of one run: a page under churn at most a tenth of Kueue's p99, admissions at least
Kueue's rate."""
PROXY_GOAL = ("<=", 1.5)
"""Ours under churn within 1.5x the proxy ceiling's p99 (kube-apiserver's cost of the hop alone)."""


def met(value: float | None, goal: tuple[str, float]) -> bool | None:
    """Whether a ratio meets its goal; None when there is no ratio to judge."""
    if value is None:
        return None
    op, bound = goal
    return value <= bound if op == "<=" else value >= bound


def per_pending(cpu_seconds: float, rss_bytes: float, pending: int) -> dict[str, float | None]:
    """The scheduler's cost per pending Workload it holds (CPU ms to take it in, RSS bytes to keep it)."""
    return {"cpu_ms_per_pending": per(cpu_seconds * 1e3, pending),
            "rss_bytes_per_pending": per(rss_bytes, pending, 1)}
