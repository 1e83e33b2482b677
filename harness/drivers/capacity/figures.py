"""One step's figures from what was measured during it (pure): three boundary scrapes of the
apiserver and the scheduler, the Locust history, and process samples.

Windows: refusals, throttling and admissions count over the whole step (a write refused while
filling is a position users never see; admissions come in waves); write rates, latencies and
staleness over the hold, when pending is at its target. Locust keeps exact percentiles per sampling interval only, so a window's p99 is pooled from
the intervals' quantiles (`pooled_quantile`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from harness.drivers.capacity import conditions
from harness.metrics import catalog, prommath, samples, summarising
from loadtests import naming

REFUSED_REASONS = frozenset({"TooLarge", "Invalid", "413", "422"})
"""The scheduler's failure reasons for a write the apiserver or etcd refused outright (not 429)."""
BYSTANDER_MODE = "bystander"
SINGLE_OBJECT_VERBS = ("GET", "PATCH", "PUT", "POST", "DELETE")
LONG_RUNNING = ("WATCH", "CONNECT")


@dataclass(frozen=True, slots=True)
class Boundaries:
    """Scrapes by source at the step's start, at the start of its hold, and at its end."""

    start: Mapping[str, samples.Scrape]
    hold: Mapping[str, samples.Scrape]
    end: Mapping[str, samples.Scrape]

    def window(self, source: str, whole_step: bool) -> list[samples.Scrape]:
        first = self.start if whole_step else self.hold
        return [s for s in (first.get(source), self.end.get(source)) if s is not None and s.error is None]

    def seconds(self, source: str, whole_step: bool) -> float:
        window = self.window(source, whole_step)
        return window[-1].t - window[0].t if len(window) == 2 else math.nan


def counter(scrapes: Sequence[samples.Scrape], metric: str,
            where: Callable[[dict[str, str]], bool] = lambda labels: True) -> float | None:
    """Increase of a counter over the scrapes, summed over the series `where` accepts; None unless two scrapes."""
    if len(scrapes) < 2:
        return None
    increases = prommath.summed_increases(scrapes, metric, ())
    return sum(value for labels, value in increases.items() if where(dict(labels)))


def gauge(scrape: samples.Scrape | None, metric: str) -> float | None:
    """Sum of a gauge's series in one scrape (None when it is absent)."""
    if scrape is None or scrape.error is not None:
        return None
    values = [v for (name, _), v in scrape.values.items() if name == metric]
    return sum(values) if values else None


def histogram_quantile(scrapes: Sequence[samples.Scrape], metric: str, q: float) -> float | None:
    """q-quantile of a histogram's observations between the scrapes, over all its series."""
    if len(scrapes) < 2:
        return None
    merged: dict[float, float] = {}
    for buckets in prommath.bucket_increases(scrapes, metric, ()).values():
        for le, count in buckets:
            merged[le] = merged.get(le, 0.0) + count
    value = prommath.histogram_quantile(q, sorted(merged.items()))
    return None if math.isnan(value) else value


VISIBILITY_SECONDS = "kqbench_visibility_request_duration_seconds"


def from_scrapes(boundaries: Boundaries) -> dict[str, float | None]:
    """The scheduler's and the apiserver's share of a step's figures."""
    sched_step = boundaries.window(catalog.SCHEDULER, whole_step=True)
    sched_hold = boundaries.window(catalog.SCHEDULER, whole_step=False)
    hold_seconds = boundaries.seconds(catalog.SCHEDULER, whole_step=False)
    api_step = boundaries.window(catalog.APISERVER, whole_step=True)

    def per_second(value: float | None) -> float | None:
        return None if value is None or not hold_seconds > 0 else value / hold_seconds

    writes = counter(sched_hold, "kqbench_positions_writes_total")
    changes = counter(sched_hold, "kqbench_positions_changes_total")
    # Watches are left out of both counts: a watch answered 429 is a watcher re-establishing while a
    # CRD's storage re-initialises (the scheduler's restart re-applies its CRDs), not a throttled client.
    throttled = [counter(api_step, "apiserver_request_total",
                         lambda labels: labels.get("code") == "429" and labels.get("verb") not in LONG_RUNNING),
                 counter(api_step, "apiserver_flowcontrol_rejected_requests_total")]
    served = counter(sched_hold, VISIBILITY_SECONDS + "_count")
    return {
        # The scheduler's own time per visibility request over the hold (its histogram), beside the
        # clients' p99 through kube-apiserver: two designs the apiserver makes look alike differ here.
        "visibility_server_p99_seconds": histogram_quantile(sched_hold, VISIBILITY_SECONDS, 0.99),
        "visibility_server_mean_seconds": (counter(sched_hold, VISIBILITY_SECONDS + "_sum") or 0.0) / served
        if served else None,
        "pending": gauge(boundaries.end.get(catalog.SCHEDULER), catalog.PENDING[catalog.SCHEDULER]),
        "refused_position_writes": counter(sched_step, "kqbench_positions_write_failures_total",
                                           lambda labels: labels.get("reason") in REFUSED_REASONS),
        "staleness_p99_seconds": histogram_quantile(sched_hold, "kqbench_positions_staleness_seconds", 0.99),
        "requests": counter(api_step, "apiserver_request_total", lambda labels: labels.get("verb") not in LONG_RUNNING),
        "throttled_requests": None if throttled[0] is None else throttled[0] + (throttled[1] or 0.0),
        # Over the whole step: admissions come in waves as quota frees (runtimes end together after
        # a fill), and a hold of a minute or less would compare the phase of a wave, not a design.
        "admissions_per_second": _rate(counter(sched_step, catalog.ADMITTED[catalog.SCHEDULER]),
                                       boundaries.seconds(catalog.SCHEDULER, whole_step=True)),
        "position_writes_per_second": per_second(writes),
        # status-field counts each position change it must write; the others coalesce by design,
        # so what they write is what they need.
        "position_writes_demanded_per_second": per_second(changes if changes else writes),
        "position_write_bytes_per_second": per_second(counter(sched_hold, "kqbench_positions_write_bytes_total")),
        "largest_object_bytes": gauge(boundaries.end.get(catalog.SCHEDULER), "kqbench_positions_largest_object_bytes"),
    }


def _rate(value: float | None, seconds: float) -> float | None:
    return None if value is None or not seconds > 0 else value / seconds


def pooled_quantile(rows: pd.DataFrame, q: float) -> float:
    """The q-quantile of several intervals' latencies (ms) from each interval's request count and
    p50/p90/p95/p99/max: each interval's distribution is taken as linear between those points."""
    rows = rows[rows["requests"] > 0]
    if rows.empty:
        return math.nan
    curves = []
    for row in rows.itertuples():
        points = [(0.0, 0.0), (row.p50_ms, 0.5), (row.p90_ms, 0.9), (row.p95_ms, 0.95), (row.p99_ms, 0.99),
                  (row.max_ms, 1.0)]
        if any(math.isnan(x) for x, _ in points):
            continue
        curves.append((float(row.requests), points))
    if not curves:
        return math.nan
    total = sum(n for n, _ in curves)

    def below(x: float) -> float:
        return sum(n * _cdf(points, x) for n, points in curves)

    low, high = 0.0, max(points[-1][0] for _, points in curves)
    for _ in range(60):  # bisection on a monotone function: 60 halvings exhaust float precision
        middle = (low + high) / 2
        if below(middle) >= q * total:
            high = middle
        else:
            low = middle
    return high


def _cdf(points: list[tuple[float, float]], x: float) -> float:
    if x >= points[-1][0]:
        return 1.0
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x < x1:
            return y0 if x1 <= x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return 1.0


def from_history(history: pd.DataFrame, window_start: float, query_mode: str) -> dict[str, float | None]:
    """Client-side p99s (seconds) over the hold: bystanders' single-object calls, the worst LIST, position queries."""
    if history.empty:
        return {}
    window = history[history["t"] > window_start]
    names = {name: naming.parse(name) for name in window["name"].unique()}

    def p99(accept: Callable[[naming.RequestName], bool]) -> float | None:
        # bool, also when the window is empty: an empty object Series would select columns, not rows
        chosen = window[window["name"].map(lambda n: accept(names[n])).astype(bool)]
        value = pooled_quantile(chosen, 0.99)
        return None if math.isnan(value) else value / 1000.0

    lists = [p99(lambda r, name=name: str(r) == name) for name, r in names.items() if r.verb == "LIST"]
    lists = [v for v in lists if v is not None]
    return {
        "bystander_p99_seconds": p99(lambda r: r.mode == BYSTANDER_MODE and r.verb in SINGLE_OBJECT_VERBS),
        "list_p99_seconds": max(lists) if lists else None,
        "query_p99_seconds": p99(lambda r: r.mode == query_mode and r.verb == "GET"),
    }


def from_processes(process_samples: Sequence[summarising.ProcessSample]) -> dict[str, float | None]:
    """Largest RSS of kube-apiserver and etcd among the step's samples."""
    def largest(component: str) -> float | None:
        found = [s.rss_bytes for s in process_samples if s.component == component]
        return float(max(found)) if found else None

    return {"apiserver_rss_bytes": largest("kube-apiserver"), "etcd_rss_bytes": largest("etcd")}


CORES = {"scheduler": "scheduler_cores", "kube-apiserver": "apiserver_cores", "etcd": "etcd_cores"}
"""Components whose cores over the hold a step reports by name; the rest of the machine is `others_cores`."""


def cores_over_hold(at_hold: Sequence[summarising.ProcessSample], at_end: Sequence[summarising.ProcessSample],
                    machine_busy_seconds: float | None, seconds: float) -> dict[str, float | None]:
    """Cores each named component used from the hold's start to the step's end, the whole machine's (every
    process: the load generator's too) and what of it no named cluster process used (`others_cores`:
    Locust, the harness, kwok, kube-controller-manager). A process restarted in between (new pid) counts
    from its first sample."""
    if not seconds > 0:
        return {}
    first = {s.pid: s for s in at_hold}
    used: dict[str, float] = {}
    for sample in at_end:
        before = first.get(sample.pid)
        used[sample.component] = used.get(sample.component, 0.0) + max(
            0.0, sample.cpu_seconds - (before.cpu_seconds if before else 0.0))
    out: dict[str, float | None] = {name: used.get(component, 0.0) / seconds for component, name in CORES.items()}
    out["machine_cores"] = None if machine_busy_seconds is None else machine_busy_seconds / seconds
    if machine_busy_seconds is not None:
        out["others_cores"] = max(0.0, machine_busy_seconds - sum(used.get(c, 0.0) for c in CORES)) / seconds
    return out


def combine(*parts: Mapping[str, float | None]) -> conditions.StepFigures:
    merged: dict[str, float] = {}
    for part in parts:
        merged.update({k: v for k, v in part.items() if v is not None})
    return conditions.StepFigures.from_dict(merged)
