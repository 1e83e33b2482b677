"""A run's tables -> one row per (case, list phase): mode x arm with latency, bytes, where lists were
served (etcd vs watch cache), consistent-read fallbacks, apiserver peak RSS and CPU (pure).

Inputs are the tidy tables the runner writes: `list_phases` (what each phase was), `load_totals`
(client-side latency and bytes), `summary` (per-phase deltas and maxima from harness.metrics).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import orjson
import pandas as pd

from harness.load import results
from harness.drivers.watchcache import listing

SCHEMA_VERSION = 1
COLUMNS = (
    "case", "arm", "k8s_version", "resource", "mode", "scope", "workers", "lists", "failures", "lists_per_second",
    "p50_ms", "p99_ms", "mb_per_list", "mb_total", "etcd_list_requests", "etcd_rv_gets", "storage_lists", "cache_lists",
    "etcd_ranges", "consistent_from_cache", "consistent_fallbacks", "apiserver_rss_start_mb", "apiserver_rss_peak_mb",
    "apiserver_cpu_cores", "etcd_rss_peak_mb", "failure_reason", "stopped_by", "phase", "feature_gates", "apiserver_args",
)
"""etcd_list_requests: the apiserver's etcd_requests_total{operation=list*} for the resource;
storage_lists / cache_lists: apiserver_storage_list_total / apiserver_cache_list_total for the resource
(1.37 dropped the latter: there it is apiserver_storage_list_total{storage=watchcache});
etcd_rv_gets: etcd_requests_total{operation=get} for the resource (1.37: operation=getCurrentResourceVersion)
— a consistent read served from the cache first asks etcd for its current revision (a one-key range);
etcd_ranges: etcd's own etcd_mvcc_range_total (every resource, gets included)."""
SUMMARY_VERBS = ("LIST-ALL-PAGES", "WATCH")
"""A paginated walk and a watch-list are reported once as a whole: these rows carry the list's latency."""
MB = 1e6


def _empty(tables: Mapping[str, pd.DataFrame], name: str) -> pd.DataFrame:
    frame = tables.get(name)
    return frame if frame is not None and not frame.empty else pd.DataFrame()


def _labels(frame: pd.DataFrame) -> list[dict]:
    return [orjson.loads(text) for text in frame["labels"]] if not frame.empty else []


def resource_matches(labels: dict, resource: str) -> bool:
    """Metrics name the resource as `resource` (1.35+) or as a `/resource` prefix (older watch caches)."""
    return labels.get("resource") == resource or labels.get("resource_prefix", "").rstrip("/").endswith("/" + resource)


def has_series(summary: pd.DataFrame, metric: str, **match: str) -> bool:
    """Whether the apiserver exposed this counter with these labels at all (metric names move between releases)."""
    rows = summary[(summary["metric"] == metric) & (summary["stat"] == "delta")]
    return any(all(str(labels.get(k, "")) == v for k, v in match.items()) for labels in _labels(rows))


def rv_gets(summary: pd.DataFrame, resource: str) -> float:
    """etcd reads of the current revision: their own operation from 1.37 on, plain gets before."""
    operation = "getCurrentResourceVersion" if has_series(
        summary, "etcd_requests_total", operation="getCurrentResourceVersion") else "get"
    return counter_delta(summary, "etcd_requests_total", resource, operation=operation)


def cache_lists(summary: pd.DataFrame, resource: str) -> float:
    """Lists the watch cache served: its own counter up to 1.36, a `storage` label on the storage one from 1.37."""
    if has_series(summary, "apiserver_cache_list_total"):
        return counter_delta(summary, "apiserver_cache_list_total", resource)
    return counter_delta(summary, "apiserver_storage_list_total", resource, storage="watchcache")


def counter_delta(summary: pd.DataFrame, metric: str, resource: str | None = None, **match: str) -> float:
    """Sum of a counter's per-phase deltas over the series matching resource and labels (summary is one case+phase)."""
    rows = summary[(summary["metric"] == metric) & (summary["stat"] == "delta")]
    total = 0.0
    for value, labels in zip(rows["value"], _labels(rows)):
        if resource is not None and not resource_matches(labels, resource):
            continue
        if all(str(labels.get(k, "")) == v for k, v in match.items()):
            total += float(value)
    return total


def _process(summary: pd.DataFrame, component: str, metric: str, stat: str) -> float:
    rows = summary[(summary["source"] == "process") & (summary["metric"] == metric) & (summary["stat"] == stat)]
    values = [float(v) for v, labels in zip(rows["value"], _labels(rows)) if labels.get("component") == component]
    if not values:
        return math.nan
    return max(values) if stat in ("max", "rate") else values[0]


def list_latency(totals: pd.DataFrame, mode: str) -> dict:
    """Client-side numbers of one phase's lists: the whole-list row (walk, watch-list) else the LIST row."""
    names = totals["name"].astype(str)
    modes = names.map(lambda name: name.rsplit(" ", 1)[-1] if name.count(" ") >= 2 else "")
    rows = totals[modes == mode]
    whole = rows[rows["verb"].isin(SUMMARY_VERBS)]
    rows = whole if not whole.empty else rows[rows["verb"] == "LIST"]
    if rows.empty:
        return {"lists": 0, "failures": 0, "lists_per_second": 0.0, "p50_ms": math.nan, "p99_ms": math.nan,
                "mb_per_list": math.nan, "mb_total": 0.0}
    row = rows.iloc[0]
    lists, failures = int(row["requests"]), int(row["failures"])
    done = max(lists - failures, 0)
    total_bytes = float(row["bytes"])
    return {"lists": lists, "failures": failures, "lists_per_second": float(row["rps"]),
            "p50_ms": float(row["p50_ms"]), "p99_ms": float(row["p99_ms"]),
            "mb_per_list": total_bytes / done / MB if done else math.nan, "mb_total": total_bytes / MB}


def rows(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (case, list phase), in run order."""
    phases = _empty(tables, listing.LIST_PHASES_TABLE)
    if phases.empty:
        return pd.DataFrame(columns=list(COLUMNS))
    totals, summary = _empty(tables, results.TOTALS_TABLE), _empty(tables, "summary")
    out = []
    for _, phase in phases.iterrows():
        case, name, resource = phase.get("case", ""), phase["phase"], phase["resource"]
        mine = totals[(totals["case"] == case) & (totals["phase"] == name)] if not totals.empty else totals
        numbers = list_latency(mine, phase["mode"]) if not mine.empty else list_latency(
            pd.DataFrame(columns=["verb", "name", "requests", "failures", "rps", "p50_ms", "p99_ms", "bytes"]),
            phase["mode"])
        s = summary[(summary["case"] == case) & (summary["phase"] == name)] if not summary.empty else summary
        if s.empty:
            s = pd.DataFrame(columns=["source", "metric", "stat", "labels", "value"])
        failures = _empty(tables, results.FAILURES_TABLE)
        if not failures.empty:
            failures = failures[(failures["case"] == case) & (failures["phase"] == name)]
        reason = ""
        if not failures.empty:
            top = failures.sort_values("occurrences", ascending=False).iloc[0]
            reason = f"{top['reason']} x{int(top['occurrences'])}"
        etcd_lists = sum(counter_delta(s, "etcd_requests_total", resource, operation=op)
                         for op in ("list", "listWithCount"))
        out.append({
            "case": case, "arm": phase["arm"], "k8s_version": phase["k8s_version"], "resource": resource,
            "mode": phase["mode"], "scope": phase["scope"], "workers": int(phase["workers"]), **numbers,
            "etcd_list_requests": etcd_lists,
            "etcd_rv_gets": rv_gets(s, resource),
            "storage_lists": counter_delta(s, "apiserver_storage_list_total", resource),
            "cache_lists": cache_lists(s, resource),
            "etcd_ranges": counter_delta(s, "etcd_mvcc_range_total"),
            "consistent_from_cache": counter_delta(s, "apiserver_watch_cache_consistent_read_total", resource,
                                                   fallback="false"),
            "consistent_fallbacks": counter_delta(s, "apiserver_watch_cache_consistent_read_total", resource,
                                                  fallback="true"),
            "apiserver_rss_start_mb": _process(s, "kube-apiserver", "rss_bytes", "first") / MB,
            "apiserver_rss_peak_mb": _process(s, "kube-apiserver", "rss_bytes", "max") / MB,
            "apiserver_cpu_cores": _process(s, "kube-apiserver", "cpu_seconds", "rate"),
            "etcd_rss_peak_mb": _process(s, "etcd", "rss_bytes", "max") / MB,
            "failure_reason": reason, "stopped_by": phase.get("stopped_by", ""), "phase": name, "feature_gates": phase["feature_gates"], "apiserver_args": phase["apiserver_args"],
        })
    return pd.DataFrame(out, columns=list(COLUMNS))


def to_json(table: pd.DataFrame) -> bytes:
    """The table as JSON with its schema version (NaN as null)."""
    records = [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
               for r in table.to_dict(orient="records")]
    return orjson.dumps({"schema_version": SCHEMA_VERSION, "columns": list(COLUMNS), "rows": records},
                        option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
