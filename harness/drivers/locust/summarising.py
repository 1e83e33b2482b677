"""The Locust driver's summary metrics: position-query and bystander latency, failure ratio (pure).

They read `load_totals`, whichever driver wrote it (the watch-cache list phases run Locust too).
"""

from __future__ import annotations

from harness.drivers import registry
from harness.drivers.locust import results
from loadtests import naming, settings as ls


RATIO_METRICS = ("load.position_query_p",)
"""Position-query latency percentiles: their indexed/snapshot ratio is the comparison's headline."""


def request_mode(name: str) -> str:
    """The load mode of a request name (`GET clusterqueues/pendingworkloads visibility-cq` -> `visibility-cq`)."""
    return naming.parse(name).mode


def metrics(tables: registry.Tables, case: str) -> list[registry.Metric]:
    totals = tables.get(results.TOTALS_TABLE)
    if totals is None or totals.empty or "case" not in totals.columns:
        return []
    totals = totals[totals["case"] == case]
    if totals.empty:
        return []
    out = []
    modes = totals["name"].map(request_mode)
    latencies = _latencies(tables, case)
    for label, mask in (("position_query", modes.isin(ls.QUERY_MODES)), ("bystander", modes == "bystander")):
        picked = totals[mask]
        if not picked.empty and picked["requests"].sum() > 0:
            histograms = _histograms(latencies, picked)
            out.append(registry.Metric(f"load.{label}_p99_ms", float(picked["p99_ms"].max()), "ms", "lower", histograms))
            out.append(registry.Metric(f"load.{label}_p50_ms", float(picked["p50_ms"].max()), "ms", "lower", histograms))
    requests = float(totals["requests"].sum())
    if requests:
        out.append(registry.Metric("load.failure_ratio", float(totals["failures"].sum()) / requests, "ratio", "lower"))
    return out



def _latencies(tables: registry.Tables, case: str):
    frame = tables.get(results.LATENCY_TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return None
    return frame[frame["case"] == case]


def _histograms(latencies, picked) -> tuple[dict[float, int], ...]:
    """One histogram per (phase, verb, name) of `picked`: the groups a metric takes the worst quantile of.

    Empty when the run kept no histograms (runs before the `load_latency` table): no interval then."""
    if latencies is None or latencies.empty:
        return ()
    out = []
    for (phase, verb, name), _ in picked.groupby(["phase", "verb", "name"], sort=True):
        rows = latencies[(latencies["phase"] == phase) & (latencies["verb"] == verb) & (latencies["name"] == name)]
        if not rows.empty:
            out.append(dict(zip(rows["ms"].astype(float), rows["count"].astype(int))))
    return tuple(out)
