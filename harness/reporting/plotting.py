"""The report's figures, each from run tables to PNG bytes; a metric that is absent gives a panel
saying "not measured in this run" instead of an error (a report of a partial run still renders)."""

from __future__ import annotations

import io
from collections.abc import Mapping

import orjson
import pandas as pd
from matplotlib.figure import Figure  # no pyplot: no backend to choose, no global figure state

from harness.metrics import headlines
from loadtests import settings as load_settings

ETCD_LIMIT_BYTES = 1.5 * 1024 * 1024
"""etcd's default --max-request-bytes: an object larger than this cannot be written."""
NOT_MEASURED = "not measured in this run"


def _png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    return buffer.getvalue()


def _empty(title: str) -> bytes:
    fig = Figure(figsize=(6, 3.2))
    ax = fig.subplots()
    ax.set_title(title)
    ax.text(0.5, 0.5, NOT_MEASURED, ha="center", va="center", fontsize=12, color="gray", transform=ax.transAxes)
    ax.set_axis_off()
    return _png(fig)


def _rows(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    frame = tables.get(name)
    return frame if frame is not None and not frame.empty else pd.DataFrame()


def _label(frame: pd.DataFrame, key: str) -> pd.Series:
    return frame["labels"].map(lambda text: orjson.loads(text).get(key, ""))


def _by_strategy(points: pd.DataFrame, x: str, y: str, title: str, ylabel: str, limit: float | None = None) -> bytes:
    if points.empty:
        return _empty(title)
    fig = Figure(figsize=(6.5, 3.6))
    ax = fig.subplots()
    for strategy, group in points.groupby("strategy"):
        group = group.sort_values(x)
        ax.plot(group[x], group[y], marker="o", label=str(strategy))
    if limit is not None:
        ax.axhline(limit, color="red", linestyle="--", label="etcd limit 1.5 MiB")
    ax.set_title(title)
    ax.set_xlabel("pending workloads")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _png(fig)


def case_points(cases: pd.DataFrame, per_case: pd.DataFrame, value: str) -> pd.DataFrame:
    """Join per-case values with each case's strategy and pending (cases: id, strategy, pending)."""
    if per_case.empty or cases.empty:
        return pd.DataFrame(columns=["strategy", "pending", value])
    joined = per_case.merge(cases, left_on="case", right_on="id")
    return joined.groupby(["strategy", "pending"], as_index=False)[value].median()


def write_qps(tables, cases: pd.DataFrame) -> bytes:
    title = "apiserver write QPS by strategy vs pending"
    summary = _rows(tables, "summary")
    if summary.empty:
        return _empty(title)
    rates = summary[(summary["metric"] == "apiserver_request_total") & (summary["stat"] == "rate")]
    rates = rates[_label(rates, "verb").isin(headlines.WRITE_VERBS)] if not rates.empty else rates
    steady = rates[~rates["phase"].isin(["setup"])]
    per_case = steady.groupby(["case", "phase"], as_index=False)["value"].sum().groupby("case", as_index=False)["value"].max()
    return _by_strategy(case_points(cases, per_case, "value"), "pending", "value", title, "writes/s (busiest phase)")


def query_latency(tables, cases: pd.DataFrame) -> bytes:
    title = "position query latency vs pending"
    totals = _rows(tables, "load_totals")
    if totals.empty:
        return _empty(title)
    modes = totals["name"].map(lambda n: n.split(" ")[-1])
    picked = totals[modes.isin(load_settings.QUERY_MODES) & (totals["requests"] > 0)]
    per_case = picked.groupby("case", as_index=False)["p99_ms"].max()
    return _by_strategy(case_points(cases, per_case, "p99_ms"), "pending", "p99_ms", title, "p99 (ms)")


def largest_object(tables, cases: pd.DataFrame) -> bytes:
    title = "largest etcd object vs pending"
    census = _rows(tables, "census")
    if census.empty:
        return _empty(title)
    per_case = census.groupby("case", as_index=False)["max_bytes"].max()
    return _by_strategy(case_points(cases, per_case, "max_bytes"), "pending", "max_bytes", title, "bytes",
                        limit=ETCD_LIMIT_BYTES)


def bystander_latency(tables) -> bytes:
    title = "bystander latency percentiles over time"
    history = _rows(tables, "load_history")
    if history.empty:
        return _empty(title)
    picked = history[history["name"].str.endswith(" bystander")]
    if picked.empty:
        return _empty(title)
    fig = Figure(figsize=(6.5, 3.6))
    ax = fig.subplots()
    for case, group in picked.groupby("case"):
        series = group.groupby("t", as_index=False)[["p50_ms", "p99_ms"]].max().sort_values("t")
        ax.plot(series["t"], series["p50_ms"], label=f"{case} p50")
        ax.plot(series["t"], series["p99_ms"], linestyle="--", label=f"{case} p99")
    ax.set_title(title)
    ax.set_xlabel("t (s, per load phase)")
    ax.set_ylabel("ms")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _png(fig)


def rss_over_time(tables) -> bytes:
    title = "apiserver / etcd RSS over time"
    obs = _rows(tables, "observations")
    if obs.empty:
        return _empty(title)
    rss = obs[(obs["source"] == "process") & (obs["metric"] == "rss_bytes")]
    if rss.empty:
        return _empty(title)
    rss = rss.assign(component=_label(rss, "component"))
    rss = rss[rss["component"].isin(["kube-apiserver", "etcd", "apiserver", "scheduler"])] if len(rss) else rss
    if rss.empty:
        return _empty(title)
    fig = Figure(figsize=(6.5, 3.6))
    ax = fig.subplots()
    for (case, component), group in rss.groupby(["case", "component"]):
        group = group.sort_values("t")
        ax.plot(group["t"], group["value"] / 2**20, label=f"{component} ({case})")
    ax.set_title(title)
    ax.set_xlabel("t (s since measurements started)")
    ax.set_ylabel("MiB")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return _png(fig)
