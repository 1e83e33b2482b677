"""The kueue-baseline driver's summary metrics: Kueue's figures by Kueue's names (pure)."""

from __future__ import annotations

import pandas as pd

from harness.drivers import registry
from harness.drivers.kueuebaseline import tabulating

BETTER = {"wall_seconds": "lower", "cq_usage_percent": "higher", "time_to_admission_seconds[small]": "lower",
          "time_to_admission_seconds[medium]": "lower", "time_to_admission_seconds[large]": "lower",
          "complete": "higher", "evictions": "lower"}
"""Rows of the kueue_baseline table that become summary entries, and which direction is better."""


def metrics(tables: registry.Tables, case: str) -> list[registry.Metric]:
    frame = tables.get(tabulating.FIGURES_TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return []
    out = []
    for _, row in frame[frame["case"] == case].iterrows():
        metric = str(row["metric"])
        if metric in BETTER and pd.notna(row["kqbench"]):
            out.append(registry.Metric(f"kueue.{metric}", float(row["kqbench"]), str(row["unit"]), BETTER[metric]))
    return out
