"""The scheduler-on-the-cluster benchmark's figures (pure: numbers in, numbers out).

One implementation's run gives latencies per read arm, counters read before and after a window,
process samples and milestones; this module turns them into the JSON the benchmark writes and,
for two implementations measured on the same machine, the ratios the goals are stated in.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
from prometheus_client.parser import text_string_to_metric_families

from harness.implementations import names
from harness.metrics import catalog
from harness.stats import intervals

MUTATING_VERBS = frozenset({"POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"})
"""apiserver_request_total verbs that write to etcd (APPLY: server-side apply)."""

PENDING_GAUGES = {names.REFERENCE: catalog.PENDING[catalog.SCHEDULER], names.KUEUE: catalog.PENDING[catalog.KUEUE]}
ADMITTED_COUNTERS = {names.REFERENCE: catalog.ADMITTED[catalog.SCHEDULER], names.KUEUE: catalog.ADMITTED[catalog.KUEUE]}
STATUS_WRITES_PER_PENDING = {names.REFERENCE: 0, names.KUEUE: 1}
"""Status writes an implementation makes to each Workload it finds pending (Kueue: the
QuotaReserved=False/Pending condition; ours publishes positions through its own API only)."""


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def latency_summary(latencies: list[float], seconds: float) -> dict:
    """Requests, rate and latency quantiles (ms) of one read arm over the `seconds` its requests took;
    empty arms say so, and a p99 of fewer than 100 requests is None (`max_ms` is the slowest)."""
    if not latencies:
        return {"requests": 0, "per_second": 0.0}
    ms = [v * 1e3 for v in latencies]
    p99 = round(quantile(ms, 0.99), 2) if intervals.has_quantile(0.99, len(ms)) else None
    return {"requests": len(ms), "per_second": round(len(ms) / seconds, 1),
            "p50_ms": round(quantile(ms, 0.5), 2), "p90_ms": round(quantile(ms, 0.9), 2),
            "p99_ms": p99, "max_ms": round(max(ms), 2), "mean_ms": round(statistics.fmean(ms), 2)}


def metric_sum(text: str, name: str, **labels: str) -> float:
    """Sum of a metric's samples whose labels include `labels` (Prometheus text)."""
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()))


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


def request_codes(text: str, resource: str, subresource: str = "") -> dict[str, float]:
    """Mutating requests to one resource[/subresource] kube-apiserver answered so far, by HTTP code."""
    out: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            labels = sample.labels
            if (sample.name == "apiserver_request_total" and labels.get("verb") in MUTATING_VERBS
                    and labels.get("resource") == resource and labels.get("subresource", "") == subresource):
                out[labels.get("code", "")] = out.get(labels.get("code", ""), 0.0) + sample.value
    return out


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
    """How far it got (e.g. Workloads seen or marked) when it stopped."""
    rate_per_second: float
    estimated_seconds: float | None
    """Not reached: seconds to the target at the rate seen so far (None when nothing moved)."""

    def to_dict(self) -> dict:
        return {k: (round(v, 2) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def milestone(name: str, target: int, samples: list[tuple[float, float]], reached: bool) -> Milestone:
    """From (seconds since start, progress) samples of a bounded wait."""
    seconds, done = samples[-1] if samples else (0.0, 0.0)
    rate = done / seconds if seconds > 0 else 0.0
    estimate = None if reached or rate <= 0 else round(target / rate, 1)
    return Milestone(name, target, reached, seconds, done, round(rate, 2), estimate)


def ratio(ours: float | None, theirs: float | None) -> float | None:
    if ours is None or theirs is None or theirs == 0:
        return None
    return round(ours / theirs, 4)


def _get(result: Mapping, *path: str) -> float | None:
    node = result
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node if isinstance(node, (int, float)) else None


def p99_ms(result: Mapping, arm: str) -> float | None:
    """An arm's p99 (ms), None when its requests are too few for one (`intervals.has_quantile`), also in a file
    written before `latency_summary` held that back (Kueue's 50 requests at 100k pending carried a "p99" that
    was their slowest): a ratio or goal on it would judge one request."""
    requests = _get(result, "arms", arm, "requests")
    if requests is None or not intervals.has_quantile(0.99, int(requests)):
        return None
    return _get(result, "arms", arm, "p99_ms")


GOALS = {
    "visibility_p99_under_churn_ours_over_kueue": ("<=", 0.1),
    "visibility_p99_under_churn_ours_over_proxy_ceiling": ("<=", 1.5),
    "admissions_per_second_ours_over_kueue": (">=", 1.0),
}


def ratios(ours: Mapping, kueue: Mapping) -> dict:
    """The issue's ratios from the two implementations' results (None where a figure is missing or a p99 rests
    on too few requests); a goal on a None ratio is not judged (`met` None)."""
    out = {
        "visibility_p99_under_churn_ours_over_kueue":
            ratio(p99_ms(ours, "cq_page_churn"), p99_ms(kueue, "cq_page_churn")),
        "visibility_p99_under_churn_no_page_cache_ours_over_kueue":
            ratio(p99_ms(ours, "cq_page_churn_no_page_cache"), p99_ms(kueue, "cq_page_churn")),
        "visibility_p99_idle_ours_over_kueue":
            ratio(p99_ms(ours, "cq_page_idle"), p99_ms(kueue, "cq_page_idle")),
        "visibility_p99_under_churn_ours_over_proxy_ceiling":
            ratio(p99_ms(ours, "cq_page_churn"), p99_ms(ours, "proxy_ceiling")),
        "visibility_p99_under_churn_no_page_cache_ours_over_proxy_ceiling":
            ratio(p99_ms(ours, "cq_page_churn_no_page_cache"), p99_ms(ours, "proxy_ceiling")),
        "admissions_per_second_ours_over_kueue":
            ratio(_get(ours, "admissions", "per_second"), _get(kueue, "admissions", "per_second")),
        "rss_at_pending_ours_over_kueue":
            ratio(_get(ours, "processed", "scheduler_rss_bytes"), _get(kueue, "processed", "scheduler_rss_bytes")),
        "seconds_to_every_workload_processed_ours_over_kueue":
            ratio(_seconds_to_processed(ours), _seconds_to_processed(kueue)),
        "apiserver_writes_per_admission_ours_over_kueue":
            ratio(_get(ours, "admissions", "apiserver_writes_per_admission"),
                  _get(kueue, "admissions", "apiserver_writes_per_admission")),
        "etcd_bytes_per_workload_ours_over_kueue":
            ratio(_get(ours, "etcd", "bytes_per_workload"), _get(kueue, "etcd", "bytes_per_workload")),
    }
    out["goals"] = {name: {"goal": f"{op} {bound}", "met": None if out[name] is None else
                           (out[name] <= bound if op == "<=" else out[name] >= bound)}
                    for name, (op, bound) in GOALS.items()}
    return out


def _seconds_to_processed(result: Mapping) -> float | None:
    """Seconds from the scheduler's start until every Workload was processed; when the bound
    stopped the wait, start-up plus the estimate at the rate seen (so a slow peer is not flattered)."""
    processed = result.get("processed")
    node = processed.get("milestone") if isinstance(processed, Mapping) else None
    if not node:
        return None
    startup = result.get("startup_seconds") or 0.0
    if node["reached"]:
        return round(startup + node["seconds"], 2)
    return None if node.get("estimated_seconds") is None else round(startup + node["estimated_seconds"], 2)


def per_pending(cpu_seconds: float, rss_bytes: float, pending: int) -> dict:
    """The scheduler's cost per pending Workload it holds (CPU ms to take it in, RSS bytes to keep it)."""
    return {"cpu_ms_per_pending_workload": per(cpu_seconds * 1e3, pending),
            "rss_bytes_per_pending_workload": per(rss_bytes, pending, 1)}


def markdown(results: Mapping[str, Mapping], found: Mapping) -> str:
    """A short table of both implementations' headline figures and the ratios."""
    rows = [("page of 100, idle queue: p99 ms", ("arms", "cq_page_idle", "p99_ms")),
            ("page of 100, under churn: p99 ms", ("arms", "cq_page_churn", "p99_ms")),
            ("page of 100, under churn, no page cache: p99 ms", ("arms", "cq_page_churn_no_page_cache", "p99_ms")),
            ("pages/s under churn", ("arms", "cq_page_churn", "per_second")),
            ("proxy ceiling (aggregated discovery): p99 ms", ("arms", "proxy_ceiling", "p99_ms")),
            ("every Workload processed: s from start", ("processed", "seconds_from_start")),
            ("  reached within the bound (1 = yes)", ("processed", "milestone", "reached")),
            ("RSS at pending: MiB", ("processed", "scheduler_rss_mib")),
            ("CPU ms per pending Workload", ("processed", "cpu_ms_per_pending_workload")),
            ("admissions/s", ("admissions", "per_second")),
            ("apiserver writes per admission", ("admissions", "apiserver_writes_per_admission")),
            ("etcd bytes per Workload", ("etcd", "bytes_per_workload"))]
    names = list(results)
    lines = ["| figure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, path in rows:
        lines.append(f"| {label} | " + " | ".join(_cell(_get(results[n], *path)) for n in names) + " |")
    lines += ["", "| ratio | value |", "|---|---|"]
    lines += [f"| {k} | {_cell(v)} |" for k, v in found.items() if k != "goals"]
    return "\n".join(lines) + "\n"


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def repeated_ratios(rounds: list[dict], peers: list[str]) -> dict:
    """Per Kueue arm and ratio: the median over the rounds of ours / that Kueue within a round, and its
    interval (harness.stats.intervals, as the gate's: none below its minimum of repeats)."""
    rng = np.random.default_rng(0)
    out: dict[str, dict] = {}
    for peer in peers:
        per_round = [ratios(r.get(names.REFERENCE, {}), r.get(peer, {})) for r in rounds]
        out[peer] = {}
        for name in per_round[0] if per_round else ():
            if name == "goals":
                continue
            values = [r[name] for r in per_round if r.get(name) is not None]
            found = intervals.repeats_interval(values, rng)
            out[peer][name] = {"median": found.value if values else None, "low": found.low, "high": found.high,
                               "each": values}
        for name, (op, bound) in GOALS.items():
            entry = out[peer].get(name) or {}
            edge = entry.get("high") if op == "<=" else entry.get("low")
            out[peer].setdefault("goals", {})[name] = {"goal": f"{op} {bound}", "met_by_the_interval": None
                                                       if edge is None else (edge <= bound if op == "<=" else edge >= bound)}
    return out
