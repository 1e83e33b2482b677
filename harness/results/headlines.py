"""The summary metrics the measurements contribute to every case (pure): bring-up speed, etcd size,
apiserver write QPS and writes per admission per phase, peak RSS per component, failed SLO checks, the
largest etcd object, the machine's calibration p50 (with the latencies behind it, for its interval).

They read the tables the runner keeps from the collector (`observations`, `summary`, `slo`,
`census`) and the load generator's own request counts (`load_totals`); the drivers add their own
(harness.drivers.contract: `metrics`). They are summary numbers, so they live with the summary:
they read the machine's calibration (`machines`) beside the measurements' tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import orjson
import pandas as pd

from harness.drivers import contract
from harness.load import results as load_results
from harness.metrics import catalog, slo as slo_rules
from harness.results import machines

WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "APPLY")
CALIBRATION_METRIC = "machine.calibration_p50_ms"
"""Not gated itself (it measures the machine, not the code); the denominator of calibrated ratios."""
BRINGUP = (("nodes_per_second", "1/s", "higher"), ("control_plane_seconds", "s", "lower"),
           ("node_ready_seconds", "s", "lower"))
ADMITTED = frozenset(catalog.ADMITTED.values())
"""Either scheduler's admissions counter (a case runs one): the denominator of writes per admission."""
MIN_ADMISSIONS = 20
"""Fewer admissions in a phase give no writes per admission: over a handful, the writes that follow time
rather than admissions (leases, queue statuses every 2 s) make the ratio noise."""


def _rows(tables: Mapping[str, pd.DataFrame], name: str, case: str) -> pd.DataFrame:
    frame = tables.get(name)
    if frame is None or frame.empty or "case" not in frame.columns:
        return pd.DataFrame()
    return frame[frame["case"] == case]


def metrics(tables: Mapping[str, pd.DataFrame], case: str) -> list[contract.Metric]:
    """Every measurement metric of one case; metrics not measured are left out."""
    out: list[contract.Metric] = []
    obs = _rows(tables, "observations", case)
    if not obs.empty:
        bring = obs[obs["source"] == "bringup"]
        for metric, unit, better in BRINGUP:
            picked = bring[bring["metric"] == metric]
            if not picked.empty:
                out.append(contract.Metric(f"bringup.{metric}", float(picked["value"].iloc[-1]), unit, better))
        db = obs[(obs["source"] == "etcd") & (obs["metric"] == "etcd_mvcc_db_total_size_in_bytes")]
        if not db.empty:
            out.append(contract.Metric("etcd.db_size_bytes", float(db.sort_values("t")["value"].iloc[-1]), "B", "lower"))
    summary = _rows(tables, "summary", case)
    if not summary.empty:
        rates = summary[(summary["metric"] == "apiserver_request_total") & (summary["stat"] == "rate")]
        if not rates.empty:
            verbs = rates["labels"].map(lambda text: orjson.loads(text).get("verb", ""))
            writes = rates[verbs.isin(WRITE_VERBS)]
            for phase, _ in rates.groupby("phase", sort=False):
                value = float(writes[writes["phase"] == phase]["value"].sum())
                out.append(contract.Metric(f"apiserver.write_qps[{phase}]", value, "1/s", "lower"))
        out += writes_per_admission(summary, _rows(tables, load_results.TOTALS_TABLE, case))
        rss = summary[(summary["source"] == "process") & (summary["metric"] == "rss_bytes") & (summary["stat"] == "max")]
        if not rss.empty:
            components = rss["labels"].map(lambda text: orjson.loads(text).get("component", ""))
            for component, group in rss.groupby(components):
                out.append(contract.Metric(f"process.rss_max_bytes[{component}]", float(group["value"].max()), "B",
                                           "lower"))
    slo = _rows(tables, "slo", case)
    if not slo.empty:  # a check over too few requests is neither passed nor failed
        judged = slo[slo["count"].map(slo_rules.sufficient)] if "count" in slo.columns else slo
        out.append(contract.Metric("slo.failed_checks", float((~judged["passed"].astype(bool)).sum()), "count", "lower"))
    calibration = _rows(tables, machines.CALIBRATION_TABLE, case)
    if not calibration.empty and "histogram" in calibration.columns:
        histogram = {float(ms): int(n) for ms, n in json.loads(calibration["histogram"].iloc[-1]).items()}
        out.append(contract.Metric(CALIBRATION_METRIC, float(calibration["p50_ms"].iloc[-1]), "ms", "lower",
                                   histograms=(histogram,), resolution=lambda _: machines.CALIBRATION_STEP_MS))
    census = _rows(tables, "census", case)
    if not census.empty:
        out.append(contract.Metric("etcd.largest_object_bytes", float(census["max_bytes"].max()), "B", "lower"))
    return out


def writes_per_admission(summary: pd.DataFrame, load_totals: pd.DataFrame) -> list[contract.Metric]:
    """Per phase with admissions: kube-apiserver's writes less the load generator's own, per Workload admitted.

    What the scheduler and the control plane wrote per admission (the admission itself, positions, queue
    statuses, leases), the code's own cost: the load's creations, Finished patches and deletions are left
    out because how many of them fall into a phase per admission follows how fast the machine fills it
    (with them the figure spread two to three times as wide over the committed quick runs, and apart by
    CPU; ci/thresholds.yaml has the spread per design). Both sides count failed requests too. A load that
    is not Locust's (the kueue-baseline driver's generator) is not in `load_totals`: its writes count in.
    """
    deltas = summary[summary["stat"] == "delta"]
    admitted = deltas[deltas["metric"].isin(ADMITTED)].groupby("phase", sort=False)["value"].sum()
    requests = deltas[deltas["metric"] == "apiserver_request_total"]
    verbs = requests["labels"].map(lambda text: orjson.loads(text).get("verb", ""))
    writes = requests[verbs.isin(WRITE_VERBS)].groupby("phase")["value"].sum()
    load = (load_totals[load_totals["verb"].isin(WRITE_VERBS)].groupby("phase")["requests"].sum()
            if not load_totals.empty else pd.Series(dtype=float))
    out = []
    for phase, admissions in admitted.items():
        if admissions < MIN_ADMISSIONS:
            continue
        own = max(0.0, float(writes.get(phase, 0.0)) - float(load.get(phase, 0.0)))
        out.append(contract.Metric(f"apiserver.writes_per_admission[{phase}]", own / float(admissions), "ratio",
                                   "lower"))
    return out
