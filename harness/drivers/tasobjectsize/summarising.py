"""The TAS object-size driver's summary metrics of one case, and ours / Kueue's per pod set (pure)."""

from __future__ import annotations

import pandas as pd

from harness.drivers import contract, peers
from harness.drivers.tasobjectsize import tabulating

PREFIX = "tas_object_size"
PER_POD_SET = {"etcd_bytes": "lower", "seconds_to_admission": "lower"}
"""Columns of the table whose ours / Kueue's the summary gives per pod set both admitted."""


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    frame = tables.get(tabulating.TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return []
    mine = frame[frame["case"] == case]
    if mine.empty:
        return []
    admitted = mine[mine["admitted"].astype(bool)]
    out = [contract.Metric(f"{PREFIX}.largest_admitted_pods", float(admitted["pods"].max()) if not admitted.empty else 0.0,
                           "pods", "higher"),
           contract.Metric(f"{PREFIX}.status_writes_refused", float(mine["status_writes_refused"].sum()), "count", "lower")]
    if not admitted.empty:
        largest = admitted.loc[admitted["pods"].idxmax()]
        if pd.notna(largest["etcd_bytes_per_host"]):
            out.append(contract.Metric(f"{PREFIX}.etcd_bytes_per_host", float(largest["etcd_bytes_per_host"]),
                                       "bytes", "lower"))
    refused = mine[~mine["admitted"].astype(bool)]
    if not refused.empty:
        out.append(contract.Metric(f"{PREFIX}.first_not_admitted_pods", float(refused["pods"].min()), "pods", "higher"))
    per_pod_set = long_form(frame)
    out += [contract.Metric(f"{PREFIX}.ratio_to_kueue.{metric}", value, "ratio", PER_POD_SET[metric.split(".")[0]])
            for metric, value in peers.ratios_to_kueue(per_pod_set, case, sorted(set(per_pod_set["metric"]))).items()]
    return out


def long_form(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (case, pod set admitted, figure): metric `<column>.pods_<P>` (what peers compares)."""
    admitted = frame[frame["admitted"].astype(bool)]
    rows = [{"case": row["case"], "phase": row["phase"], "implementation": row["implementation"],
             "metric": f"{column}.pods_{int(row['pods'])}", "value": row[column]}
            for _, row in admitted.iterrows() for column in PER_POD_SET if pd.notna(row[column])]
    return pd.DataFrame(rows, columns=["case", "phase", "implementation", "metric", "value"])
