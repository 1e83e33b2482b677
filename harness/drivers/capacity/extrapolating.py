"""The paper model next to the measurement (pure): from each design's measured cost and this
machine's measured apiserver write capacity, where it should break, here and on a large cluster.

Models (N: pending Workloads, a: admissions per second, the queue's churn):
- status-field: every admission moves the position of every Workload behind it, so position
  changes arrive far faster than they can be written (D = k * N * a, shown as "demanded"); the
  publisher coalesces them per Workload and sweeps the pending Workloads at the write rate W it
  gets (the client limit, or what the apiserver delivers without one). A position is then about
  N / W old: staleness p99 reaches the threshold at N* = threshold * W, whatever the churn (as long
  as positions keep changing between sweeps, which at tens of admissions/s they do).
- single-object: the object grows by b bytes per pending Workload (b fitted: largest object / N);
  it breaks when one write exceeds etcd's request limit (1.5 MiB): N* = 1.5 MiB / b, whatever a.
- cq-status-topn: writes bounded by queues / refresh period, object bounded by N entries: no break
  from writes (it shows only the head of the queue: that is its cost).
- aggregated-snapshot: a query copies and sorts the queue, p99 = c * N * log2(N); N* where that
  reaches the query threshold.
- aggregated-indexed: a query walks an order-statistic index, p99 = t0 + c * log2(N) (least squares);
  N* where that reaches the query threshold.
"""

from __future__ import annotations

import math
import statistics

import pandas as pd

from scheduler.publishing import strategies

ETCD_REQUEST_LIMIT_BYTES = 1.5 * 1024 * 1024
"""etcd's default --max-request-bytes: the largest write etcd accepts."""
LARGE_PENDING = 100_000
LARGE_ADMISSIONS_PER_SECOND = 500.0
"""The churn of a 100k-node cluster: the admission rate the reference scheduler is built to sustain
there (its 100k benchmark reaches 474-505/s on this machine)."""
BEYOND = 1e9
"""Predicted break points past a billion pending are reported as never (a fit on noise)."""
SATURATED = 1.1
"""A step saturated the apiserver when it demanded 10% more writes than were delivered."""
COLUMNS = ("design", "model", "fitted", "measured_max_held", "measured_first_broken", "predicted_break_here",
           "predicted_break_large", "at_100k_and_large_churn")


def write_capacity(steps: pd.DataFrame) -> tuple[float, bool]:
    """(writes/s, saturated?): what the apiserver delivered at saturation without a client limit;
    the largest delivery seen (a lower bound) when no such step exists."""
    free = steps[steps["client_limit"] == "none"]
    delivered = free["position_writes_per_second"]
    saturated = free[free["position_writes_demanded_per_second"] > SATURATED * delivered]
    if not saturated.empty:
        return float(saturated["position_writes_per_second"].max()), True
    seen = steps["position_writes_per_second"].dropna()
    return (float(seen.max()), False) if not seen.empty else (math.nan, False)


def _median(values) -> float:
    values = [v for v in values if v is not None and not math.isnan(v) and v > 0]
    return statistics.median(values) if values else math.nan


def _solve(f, target: float, low: float = 1.0, high: float = 1e9) -> float:
    """x in [low, high] where increasing f(x) reaches target (inf when it never does)."""
    if f(high) < target:
        return math.inf
    for _ in range(200):
        middle = math.sqrt(low * high)
        low, high = (middle, high) if f(middle) < target else (low, middle)
    return high


def _row(design: dict, model: str, fitted: str, here: float, large: float, at_large: float, capacity: pd.Series):
    here, large, at_large = (math.inf if v > BEYOND else v for v in (here, large, at_large))
    verdict = "unknown" if math.isnan(at_large) else ("breaks" if at_large <= LARGE_PENDING else "holds")
    return {"design": design["design"], "model": model, "fitted": fitted,
            "measured_max_held": capacity.get("max_held", math.nan),
            "measured_first_broken": capacity.get("first_broken", math.nan),
            "predicted_break_here": here, "predicted_break_large": large, "at_100k_and_large_churn": verdict}


def predict(steps: pd.DataFrame, capacity: pd.DataFrame, query_p99_seconds: float = 1.0,
            staleness_p99_seconds: float = 30.0) -> pd.DataFrame:
    """One row per design: its model, the fitted constant, predicted vs measured break points."""
    if steps.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    capacity_by = capacity.set_index("design") if not capacity.empty else pd.DataFrame()
    writes, _ = write_capacity(steps)
    rows = []
    for name, own in steps.groupby("design", sort=False):
        design = {"design": name, "strategy": own["strategy"].iloc[0], "client_limit": own["client_limit"].iloc[0]}
        measured = capacity_by.loc[name] if name in capacity_by.index else pd.Series(dtype=float)
        n = own["load"].astype(float)
        a = own["admissions_per_second"]
        strategy = design["strategy"]
        if strategy == strategies.STATUS_FIELD:
            k = _median(own["position_writes_demanded_per_second"] / (n * a))
            sweep = _median(own["position_writes_per_second"])
            limit = staleness_p99_seconds * sweep
            rows.append(_row(design, "staleness = N / W (sweep at the write rate W)",
                             f"W={sweep:.0f} writes/s, demand k={k:.3g} (D=k*N*a), apiserver {writes:.0f}/s",
                             limit, limit, limit, measured))
        elif strategy == strategies.SINGLE_OBJECT:
            b = _median(own["largest_object_bytes"] / n)
            limit = ETCD_REQUEST_LIMIT_BYTES / b
            rows.append(_row(design, "object = b*N bytes vs 1.5 MiB", f"b={b:.1f} B/Workload", limit, limit, limit,
                             measured))
        elif strategy == strategies.CQ_STATUS_TOPN:
            rows.append(_row(design, "bounded writes, top N only", "-", math.inf, math.inf, math.inf, measured))
        elif strategy == strategies.AGGREGATED_SNAPSHOT:
            c = _median(own["query_p99_seconds"] / (n * n.map(math.log2)))
            limit = _solve(lambda x: c * x * math.log2(x), query_p99_seconds) if c == c else math.nan
            rows.append(_row(design, "query p99 = c*N*log2(N)", f"c={c:.3g} s", limit, limit, limit, measured))
        else:
            t0, c = _fit_log(own)
            limit = _log_break(t0, c, query_p99_seconds)
            rows.append(_row(design, "query p99 = t0 + c*log2(N)", f"t0={t0:.3g} s, c={c:.3g} s", limit, limit,
                             limit, measured))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _log_break(t0: float, c: float, target: float) -> float:
    """N where t0 + c*log2(N) reaches target: inf for a flat or tiny slope (2**x would overflow a float)."""
    if c != c or t0 != t0:
        return math.nan
    if c <= 0:
        return math.inf
    exponent = (target - t0) / c
    return math.inf if exponent > math.log2(BEYOND) else 2 ** exponent


def _fit_log(steps: pd.DataFrame) -> tuple[float, float]:
    points = [(math.log2(n), t) for n, t in zip(steps["load"], steps["query_p99_seconds"])
              if n > 0 and t == t and t is not None]
    if len(points) < 2:
        return (points[0][1], 0.0) if points else (math.nan, math.nan)
    xs, ys = zip(*points)
    slope, intercept = statistics.linear_regression(xs, ys)
    return intercept, slope
