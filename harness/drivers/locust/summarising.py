"""The Locust driver's summary metrics: position-query and bystander latency, failure ratio (pure).

They read `load_totals`, whichever driver wrote it (the watch-cache list phases run Locust too).
Latency quantiles come from the HDR histograms (`load_hdr`, microseconds) when every request group
behind them has one, else from Locust's figures (whole milliseconds below 100 ms: runs before HDR
recording); each metric says which resolution its data have.
"""

from __future__ import annotations

from collections.abc import Mapping

from harness.drivers import contract
from harness.load import results
from harness.results import runs
from harness.stats import intervals
from loadtests import histograms as hdr, naming, settings as ls

RATIO_METRICS = ("load.position_query_p",)
"""Position-query latency percentiles: their indexed/snapshot ratio is the comparison's headline."""
CALIBRATED_METRICS = ("load.position_query_p50_ms",)
"""The position-query p50 over the machine's calibration p50, per design: the typical query in units of
the apiserver's own fastest path, which moves far less between days and CPUs than the milliseconds do.
The p50 only: a tail is queueing behind other work, which the calibration does not scale."""
REQUEST_METRICS = (("load.position_query_", ls.QUERY_MODES), ("load.bystander_", ("bystander",)))
"""Prefixes of the metrics that are percentiles over requests, with the request modes behind them."""


def request_mode(name: str) -> str:
    """The load mode of a request name (`GET clusterqueues/pendingworkloads visibility-cq` -> `visibility-cq`)."""
    return naming.parse(name).mode


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    totals = tables.get(results.TOTALS_TABLE)
    if totals is None or totals.empty or "case" not in totals.columns:
        return []
    totals = totals[totals["case"] == case]
    if totals.empty:
        return []
    out = []
    modes = totals["name"].map(request_mode)
    latencies, recorded = _of_case(tables, results.LATENCY_TABLE, case), _of_case(tables, results.HDR_TABLE, case)
    for prefix, wanted in REQUEST_METRICS:
        picked = totals[modes.isin(wanted)]
        if not picked.empty and picked["requests"].sum() > 0:
            fine = _hdr_histograms(recorded, picked)
            for q, column in ((0.99, "p99_ms"), (0.50, "p50_ms")):
                name = f"{prefix}{column}"
                if fine:
                    out.append(contract.Metric(name, intervals.worst_quantile(fine, q), "ms", "lower", fine,
                                               hdr.hdr_step_ms))
                else:
                    out.append(contract.Metric(name, float(picked[column].max()), "ms", "lower",
                                               _histograms(latencies, picked), hdr.locust_step_ms))
    requests = float(totals["requests"].sum())
    if requests:
        out.append(contract.Metric("load.failure_ratio", float(totals["failures"].sum()) / requests, "ratio", "lower"))
    return out


def request_counts(tables: contract.Tables) -> dict[tuple[str, str], int]:
    """(metric, case) -> requests behind each request-percentile metric (the n= of its interval)."""
    totals = tables.get(results.TOTALS_TABLE)
    if totals is None or totals.empty:
        return {}
    modes = totals["name"].map(request_mode)
    out: dict[tuple[str, str], int] = {}
    for prefix, wanted in REQUEST_METRICS:
        for case, requests in totals[modes.isin(wanted)].groupby("case")["requests"].sum().items():
            for column in ("p50_ms", "p99_ms"):
                out[(f"{prefix}{column}", case)] = int(requests)
    return out


def case_pending(scenario: Mapping, params: Mapping) -> int | None:
    """Workloads a case held: its sweep's `phases.fill.pending`, else the first fill phase's; None without a fill."""
    fills = [phase.get("pending", 0) for phase in (scenario.get("phases") or {}).values() if phase.get("kind") == "fill"]
    if not fills and runs.param(params, "phases.fill.pending", None) is None:
        return None
    return runs.param(params, "phases.fill.pending", fills[0] if fills else 0) or 0


def _of_case(tables: contract.Tables, table: str, case: str):
    frame = tables.get(table)
    if frame is None or frame.empty or "case" not in frame.columns:
        return None
    return frame[frame["case"] == case]


def _hdr_histograms(recorded, picked) -> tuple[dict[float, int], ...]:
    """One HDR histogram (ms -> requests, at microsecond resolution) per (phase, verb, name) of `picked`.

    Empty unless every group with requests has one (a run before HDR recording, or a Locust file of
    one's own without it): a metric is read from one resolution, not a mix."""
    if recorded is None or recorded.empty:
        return ()
    out = []
    for (phase, verb, name), group in picked.groupby(["phase", "verb", "name"], sort=True):
        rows = recorded[(recorded["phase"] == phase) & (recorded["verb"] == verb) & (recorded["name"] == name)]
        if rows.empty:
            if group["requests"].sum() > 0:
                return ()
            continue
        out.append(hdr.counts_ms(hdr.merge(rows["hdr"])))
    return tuple(out)


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
