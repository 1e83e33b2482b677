"""The report's watch-cache section: one row per list mode and arm, and a figure.

Also writes the table next to report.html as watchcache.csv and watchcache.json, the small files a
reference run commits instead of its parquet tables.
"""

from __future__ import annotations

import html
import io
from collections.abc import Mapping
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from harness.drivers import contract
from harness.drivers.watchcache import tabulating

TITLE = "Watch cache: list modes x apiserver feature arms"
SHOWN = ("arm", "k8s_version", "mode", "scope", "workers", "lists", "failures", "p50_ms", "p99_ms", "mb_per_list",
         "etcd_list_requests", "etcd_rv_gets", "storage_lists", "cache_lists", "etcd_ranges", "consistent_from_cache",
         "consistent_fallbacks", "apiserver_rss_start_mb", "apiserver_rss_peak_mb", "apiserver_cpu_cores", "failure_reason",
         "stopped_by")
CSV_NAME = "watchcache.csv"
JSON_NAME = "watchcache.json"


def figure(table: pd.DataFrame) -> bytes:
    """p99 latency, etcd list requests and apiserver peak RSS per mode, one bar per arm."""
    table = table.assign(row=table["mode"] + "/" + table["scope"].str[0])
    fig = Figure(figsize=(15, 4))
    axes = fig.subplots(1, 3)
    for ax, column, label in zip(axes, ("p99_ms", "etcd_list_requests", "apiserver_rss_peak_mb"),
                                 ("p99 latency of one list (ms)", "etcd list requests in the phase",
                                  "kube-apiserver peak RSS (MB)")):
        pivot = table.pivot_table(index="row", columns="arm", values=column, aggfunc="max", sort=False, dropna=False)
        if pivot.isna().all().all():
            ax.text(0.5, 0.5, "not measured in this run", ha="center", va="center", color="gray",
                    transform=ax.transAxes)
        else:
            pivot.astype(float).plot.bar(ax=ax, rot=30, legend=ax is axes[0])
        ax.set_ylabel(label)
        ax.set_xlabel("mode / scope (n: namespace, c: cluster)")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=80, bbox_inches="tight")
    return buffer.getvalue()


def section(tables: Mapping[str, pd.DataFrame], out_dir: Path | None = None) -> contract.ReportSection | None:
    """The section with its figure; None when the run has no list phases."""
    table = tabulating.rows(tables)
    if table.empty:
        return None
    if out_dir is not None:
        table.to_csv(Path(out_dir) / CSV_NAME, index=False)
        (Path(out_dir) / JSON_NAME).write_bytes(tabulating.to_json(table))
    shown = table[list(SHOWN)].to_html(index=False, escape=True, classes="data", na_rep="–",
                                        float_format=lambda v: f"{v:.4g}")
    note = ("<p class='muted'>p50/p99: one whole list as the client saw it (all pages of a paginated walk; a watch-list "
            "up to its initial-events-end bookmark). etcd_list_requests: the apiserver's etcd_requests_total list "
            "operations for the resource; storage_lists / cache_lists: apiserver_storage_list_total / "
            "apiserver_cache_list_total; etcd_ranges: etcd's own range count (all resources). RSS sampled at "
            "each scrape.</p>")
    return contract.ReportSection(f"<h2>{html.escape(TITLE)}</h2>{note}{shown}", ((TITLE, figure(table)),))
