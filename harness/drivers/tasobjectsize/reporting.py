"""The report's TAS object-size section: one row per case and pod set, and stored bytes against hosts."""

from __future__ import annotations

import html
import io

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.tasobjectsize import modelling, tabulating

TITLE = "TAS: a topology assignment's size in etcd"
SHOWN = {"case": "case", "implementation": "implementation", "node_names": "node names", "pods": "pods (one per host)",
         "admitted": "admitted", "seconds_to_admission": "after s", "hosts_in_assignment": "hosts named",
         "etcd_bytes": "bytes in etcd", "etcd_bytes_per_host": "bytes/host",
         "model_v1beta2_compact_bytes": "model: v0.17 slice", "model_v1beta2_prefix_runs_bytes": "model: v0.19 prefix runs",
         "model_domain_list_bytes": "model: domain list", "status_writes_refused": "status writes refused",
         "status_writes_refused_watched": "refused in the watch after", "etcd_limit_bytes": "etcd limit"}
NOTE = ("One Workload at a time asks for P one-CPU pods preferring one block of one-CPU nodes, so each pod takes a host "
        "and its admission names P hosts. Bytes in etcd: the stored value of its key once admitted (or at its bound). "
        "The model: the admission's JSON in each encoding with the pool's node names plus a 2,000-byte allowance for "
        "the rest of the Workload (which encoding an implementation writes depends on the Kueue version it follows). "
        "Status writes refused: kube-apiserver's 5xx answers to workloads/status writes (etcd refuses a request over "
        "its limit), until the bound and in the watch after it.")


def figure(table: pd.DataFrame) -> bytes:
    """Bytes in etcd against pod set size, one line per case, its pod sets not admitted as crosses on etcd's
    request limit (dashed)."""
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    for case, mine in table.groupby("case", sort=False):
        admitted = mine[mine["admitted"].astype(bool) & mine["etcd_bytes"].notna()]
        [line] = ax.plot(admitted["pods"], admitted["etcd_bytes"] / 1e6, marker="o", label=str(case))
        refused = mine[~mine["admitted"].astype(bool)]
        ax.scatter(refused["pods"], refused["etcd_limit_bytes"] / 1e6, marker="x", s=80, color=line.get_color())
    for limit in sorted(set(table["etcd_limit_bytes"].dropna())):
        ax.axhline(limit / 1e6, color="gray", linestyle="--", linewidth=1)
        ax.text(0.01, limit / 1e6, f" etcd limit {limit / 2**20:g} MiB", color="gray", fontsize=8, va="bottom",
                transform=ax.get_yaxis_transform())
    ax.set_xlabel("pods, one per host (x: not admitted)")
    ax.set_ylabel("Workload stored in etcd (MB)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    return buffer.getvalue()


def section(tables: contract.Tables) -> contract.ReportSection | None:
    table = tables.get(tabulating.TABLE)
    if table is None or table.empty:
        return None
    shown = table[[c for c in SHOWN if c in table.columns]].rename(columns=SHOWN)
    body = shown.to_html(index=False, escape=True, classes="data", na_rep="–", float_format=lambda v: f"{v:,.4g}")
    note = f"<p class='muted'>{html.escape(NOTE)} Kueue's CRD caps the roots at {modelling.KUEUE_MAX_ROOTS:,}.</p>"
    return contract.ReportSection(f"<h2>{html.escape(TITLE)}</h2>{note}{body}", ((TITLE, figure(table)),))
