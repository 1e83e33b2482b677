"""The report's workload-loading section: one row per case and phase, CPU per process beside it."""

from __future__ import annotations

import html

import pandas as pd

from harness.drivers import contract
from harness.drivers.workloadloading import tabulating

TITLE = "Pending Workloads by POSTs and by bulk loading"
NOTE = ("Seconds from the phase's start: until the last POST was answered or etcd answered the last write, until "
        "kube-apiserver served them all (a paginated LIST counts them), until the scheduler held them all pending (its "
        "pending gauge for the ClusterQueue). CPU: seconds each process spent in the phase.")


def table(tables: contract.Tables) -> pd.DataFrame:
    """One row per case and phase, the CPU of each process as a column `cpu <component> s`."""
    frame = tables.get(tabulating.TABLE)
    if frame is None or frame.empty:
        return pd.DataFrame()
    cpu = tables.get(tabulating.CPU_TABLE)
    if cpu is not None and not cpu.empty:
        wide = cpu.pivot_table(index=["case", "phase"], columns="component", values="cpu_seconds", aggfunc="first")
        wide.columns = [f"cpu {c} s" for c in wide.columns]
        frame = frame.merge(wide.reset_index(), on=["case", "phase"], how="left")
    return frame


def section(tables: contract.Tables) -> contract.ReportSection | None:
    shown = table(tables)
    if shown.empty:
        return None
    body = shown.drop(columns=["scheduler_pending_before"]).to_html(
        index=False, escape=True, classes="data", na_rep="–", float_format=lambda v: f"{v:,.1f}")
    return contract.ReportSection(f"<h2>{html.escape(TITLE)}</h2><p class='muted'>{html.escape(NOTE)}</p>{body}")
