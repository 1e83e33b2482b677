"""Locust's statistics as tidy pandas frames. Pure: works on plain snapshots, not on Locust objects.

- `history`: one row per (interval, request name): requests, failures, rps, bytes and exact
  percentiles of that interval (from the difference of two cumulative histograms).
- `totals`: one row per request name over the whole run.
- `failures`: one row per (request name, reason) with its count.
- `latencies`: one row per (request name, response time) with its count over the whole run: Locust's
  own histogram (rounded like Locust rounds), what the summaries bootstrap latency intervals from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

PERCENTILES = (0.5, 0.9, 0.95, 0.99)
HISTORY_COLUMNS = ["t", "verb", "name", "requests", "failures", "rps", "bytes",
                   "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"]
TOTALS_COLUMNS = ["verb", "name", "requests", "failures", "successes", "rps", "bytes", "mean_ms",
                  "p50_ms", "p90_ms", "p95_ms", "p99_ms", "max_ms"]
FAILURE_COLUMNS = ["verb", "name", "reason", "occurrences"]
LATENCY_COLUMNS = ["verb", "name", "ms", "count"]


@dataclass(frozen=True, slots=True)
class EntrySnapshot:
    """Cumulative counters of one request name at one moment (copied out of Locust's StatsEntry)."""

    verb: str
    name: str
    requests: int
    failures: int
    bytes: int
    total_ms: float
    histogram: dict[int, int] = field(default_factory=dict)
    """Rounded response time in ms -> count (Locust rounds to 2 significant digits above 100 ms)."""


@dataclass(frozen=True, slots=True)
class Sample:
    t: float
    """Seconds since the run started."""
    entries: tuple[EntrySnapshot, ...]


def percentile(histogram: dict[int, int] | Counter, q: float) -> float:
    """The q-quantile of a histogram of response times, as Locust computes it (nearest rank)."""
    total = sum(histogram.values())
    if total <= 0:
        return float("nan")
    rank = int(total * q)
    seen = 0
    for value in sorted(histogram, reverse=True):
        seen += histogram[value]
        if total - seen <= rank:
            return float(value)
    return float(min(histogram))


def _stats(histogram: dict[int, int] | Counter) -> list[float]:
    values = [percentile(histogram, q) for q in PERCENTILES]
    positive = [v for v, c in histogram.items() if c > 0]
    return values + [float(max(positive)) if positive else float("nan")]


def history(samples: list[Sample]) -> pd.DataFrame:
    """Per-interval rows between consecutive samples, for every name seen so far."""
    rows = []
    previous: dict[tuple[str, str], EntrySnapshot] = {}
    previous_t = 0.0
    for sample in samples:
        interval = sample.t - previous_t
        for entry in sample.entries:
            key = (entry.verb, entry.name)
            before = previous.get(key)
            hist = Counter(entry.histogram)
            if before is not None:
                hist.subtract(before.histogram)
                hist = Counter({k: v for k, v in hist.items() if v > 0})
            requests = entry.requests - (before.requests if before else 0)
            rows.append([sample.t, entry.verb, entry.name, requests,
                         entry.failures - (before.failures if before else 0),
                         requests / interval if interval > 0 else float("nan"),
                         entry.bytes - (before.bytes if before else 0), *_stats(hist)])
            previous[key] = entry
        previous_t = sample.t
    return pd.DataFrame(rows, columns=HISTORY_COLUMNS)


def totals(final: Sample) -> pd.DataFrame:
    """Whole-run figures per name from the last sample."""
    rows = []
    for entry in final.entries:
        answered = sum(entry.histogram.values())
        rows.append([entry.verb, entry.name, entry.requests, entry.failures, entry.requests - entry.failures,
                     entry.requests / final.t if final.t > 0 else float("nan"), entry.bytes,
                     entry.total_ms / answered if answered else float("nan"), *_stats(entry.histogram)])
    frame = pd.DataFrame(rows, columns=TOTALS_COLUMNS)
    return frame.sort_values(["verb", "name"], ignore_index=True)


def latencies(final: Sample) -> pd.DataFrame:
    """Whole-run response-time histogram per name from the last sample (a few hundred rows per name)."""
    rows = [[entry.verb, entry.name, int(ms), int(count)]
            for entry in final.entries for ms, count in sorted(entry.histogram.items()) if count > 0]
    return pd.DataFrame(rows, columns=LATENCY_COLUMNS).astype({"ms": "int64", "count": "int64"})


_WRAPPED = re.compile(r"^(?:CatchResponseError|LocustError)\((['\"])(?P<reason>.*)\1\)$")


def clean_reason(error: str) -> str:
    """`CatchResponseError('404 NotFound')` -> `404 NotFound`; other errors unchanged."""
    match = _WRAPPED.match(error.strip())
    return match.group("reason") if match else error.strip()


def failures(errors: list[tuple[str, str, str, int]]) -> pd.DataFrame:
    """(verb, name, error, occurrences) rows, errors cleaned and merged by reason."""
    merged: Counter = Counter()
    for verb, name, error, occurrences in errors:
        merged[(verb, name, clean_reason(error))] += occurrences
    rows = [[verb, name, reason, count] for (verb, name, reason), count in merged.items()]
    frame = pd.DataFrame(rows, columns=FAILURE_COLUMNS)
    return frame.sort_values(["verb", "name", "reason"], ignore_index=True)


WORKER_COLUMNS = ["worker", "host", "pid", "requests", "failures", "cpu_seconds"]


def workers(tallies) -> pd.DataFrame:
    """One row per worker that joined the master: what it sent (requests, failures) and its CPU seconds."""
    rows = [[t.worker, t.host, t.pid, t.requests, t.failures, t.cpu_seconds] for t in tallies]
    return pd.DataFrame(rows, columns=WORKER_COLUMNS).astype(
        {"pid": "int64", "requests": "int64", "failures": "int64", "cpu_seconds": "float64"})
