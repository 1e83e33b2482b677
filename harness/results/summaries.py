"""summary.json: the few numbers a gate reads, computed from a run's tables (pure except read/write).

Each entry is one metric at one sweep point: the median over the point's repeats (with the samples
kept), a unit and which direction is better. Ratios measured within one run (indexed vs snapshot
query latency at the same point) are entries of their own: they cancel the machine's speed, so a
gate on them is far less noisy than a gate on absolute numbers.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

import orjson
import pandas as pd

from harness.results import runs

SCHEMA_VERSION = 1
"""summary.json format; readers refuse newer ones. 1: first format."""
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "APPLY")
QUERY_MODES = ("visibility-cq", "visibility-lq", "workload-status", "cq-status", "single-object")
KUEUE_METRICS = {"wall_seconds": "lower", "cq_usage_percent": "higher", "time_to_admission_seconds[small]": "lower",
                 "time_to_admission_seconds[medium]": "lower", "time_to_admission_seconds[large]": "lower",
                 "complete": "higher", "evictions": "lower"}
"""Rows of the kueue_baseline table that become summary entries, and which direction is better."""
RATIO_PAIRS = (("aggregated-indexed", "aggregated-snapshot"),)
"""(numerator, denominator) strategies whose latency ratio is reported at every shared point."""


@dataclass(slots=True)
class Entry:
    metric: str
    point: str
    value: float
    unit: str
    better: str
    """lower | higher."""
    samples: list[float] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.metric} @ {self.point}"


@dataclass(slots=True)
class Summary:
    run_id: str
    scenario: str
    status: str
    entries: dict[str, Entry] = field(default_factory=dict)
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return {"schema_version": self.schema_version, "run_id": self.run_id, "scenario": self.scenario,
                "status": self.status, "metrics": {k: asdict(e) for k, e in sorted(self.entries.items())}}

    @classmethod
    def from_dict(cls, data: dict, source: str = "summary.json") -> "Summary":
        runs.check_version(data, SCHEMA_VERSION, source)
        entries = {k: Entry(**v) for k, v in (data.get("metrics") or {}).items()}
        return cls(data.get("run_id", ""), data.get("scenario", ""), data.get("status", ""), entries,
                   data["schema_version"])


# -- per case: one number per metric --------------------------------------------------------


def case_metrics(tables: Mapping[str, pd.DataFrame], case: str) -> list[tuple[str, float, str, str]]:
    """(metric, value, unit, better) measured in one case; metrics not measured are left out."""
    out: list[tuple[str, float, str, str]] = []

    def rows(name: str) -> pd.DataFrame:
        frame = tables.get(name)
        if frame is None or frame.empty or "case" not in frame.columns:
            return pd.DataFrame()
        return frame[frame["case"] == case]

    obs = rows("observations")
    if not obs.empty:
        bring = obs[obs["source"] == "bringup"]
        for metric, unit, better in (("nodes_per_second", "1/s", "higher"), ("control_plane_seconds", "s", "lower"),
                                     ("node_ready_seconds", "s", "lower")):
            picked = bring[bring["metric"] == metric]
            if not picked.empty:
                out.append((f"bringup.{metric}", float(picked["value"].iloc[-1]), unit, better))
        db = obs[(obs["source"] == "etcd") & (obs["metric"] == "etcd_mvcc_db_total_size_in_bytes")]
        if not db.empty:
            out.append(("etcd.db_size_bytes", float(db.sort_values("t")["value"].iloc[-1]), "B", "lower"))
    summary = rows("summary")
    if not summary.empty:
        rates = summary[(summary["metric"] == "apiserver_request_total") & (summary["stat"] == "rate")]
        if not rates.empty:
            verbs = rates["labels"].map(lambda text: orjson.loads(text).get("verb", ""))
            writes = rates[verbs.isin(WRITE_VERBS)]
            for phase, group in rates.groupby("phase", sort=False):
                value = float(writes[writes["phase"] == phase]["value"].sum())
                out.append((f"apiserver.write_qps[{phase}]", value, "1/s", "lower"))
        rss = summary[(summary["source"] == "process") & (summary["metric"] == "rss_bytes") & (summary["stat"] == "max")]
        if not rss.empty:
            components = rss["labels"].map(lambda text: orjson.loads(text).get("component", ""))
            for component, group in rss.groupby(components):
                out.append((f"process.rss_max_bytes[{component}]", float(group["value"].max()), "B", "lower"))
    slo = rows("slo")
    if not slo.empty:
        out.append(("slo.failed_checks", float((~slo["passed"].astype(bool)).sum()), "count", "lower"))
    census = rows("census")
    if not census.empty:
        out.append(("etcd.largest_object_bytes", float(census["max_bytes"].max()), "B", "lower"))
    kueue = rows("kueue_baseline")
    if not kueue.empty:  # Kueue's perf-test figures (harness.kueuebaseline), by Kueue's names
        for _, row in kueue.iterrows():
            metric = str(row["metric"])
            if metric in KUEUE_METRICS and pd.notna(row["kqbench"]):
                out.append((f"kueue.{metric}", float(row["kqbench"]), str(row["unit"]), KUEUE_METRICS[metric]))
    totals = rows("load_totals")
    if not totals.empty:
        modes = totals["name"].map(lambda name: name.split(" ")[-1] if name.count(" ") >= 2 else "")
        for label, mask in (("position_query", modes.isin(QUERY_MODES)), ("bystander", modes == "bystander")):
            picked = totals[mask]
            if not picked.empty and picked["requests"].sum() > 0:
                out.append((f"load.{label}_p99_ms", float(picked["p99_ms"].max()), "ms", "lower"))
                out.append((f"load.{label}_p50_ms", float(picked["p50_ms"].max()), "ms", "lower"))
        requests = float(totals["requests"].sum())
        if requests:
            out.append(("load.failure_ratio", float(totals["failures"].sum()) / requests, "ratio", "lower"))
    return out


# -- per run: medians over repeats, ratios within the run --------------------------------------


def summarise(run: Mapping, tables: Mapping[str, pd.DataFrame]) -> Summary:
    """The summary of a run from its run.json (as dict) and its tables."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    meta: dict[str, tuple[str, str]] = {}
    params_of: dict[str, dict] = {}
    for case in run.get("cases", []):
        if case.get("status") not in ("ok", "failed", "interrupted"):
            continue
        params_of[case["point"]] = case.get("params", {})
        for metric, value, unit, better in case_metrics(tables, case["id"]):
            samples[(metric, case["point"])].append(value)
            meta[metric] = (unit, better)
    summary = Summary(run.get("run_id", ""), run.get("scenario_name", ""), run.get("status", ""))
    for (metric, point), values in samples.items():
        unit, better = meta[metric]
        entry = Entry(metric, point, float(statistics.median(values)), unit, better, values)
        summary.entries[entry.key] = entry
    for entry in ratios(summary.entries.values(), params_of):
        summary.entries[entry.key] = entry
    return summary


def ratios(entries, params_of: Mapping[str, dict]) -> list[Entry]:
    """numerator/denominator strategy ratios of latency metrics at points that differ only in strategy."""
    by_point = {(e.metric, e.point): e for e in entries}
    out = []
    for (metric, point), entry in sorted(by_point.items()):
        if not metric.startswith("load.position_query_p"):
            continue
        params = params_of.get(point, {})
        for numerator, denominator in RATIO_PAIRS:
            if params.get("scheduler.strategy") != numerator:
                continue
            other = {**params, "scheduler.strategy": denominator}
            match = next((p for p, q in params_of.items() if q == other), None)
            base = by_point.get((metric, match)) if match else None
            if base is None or base.value <= 0:
                continue
            rest = ",".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in params.items() if k != "scheduler.strategy") or "all"
            name = f"ratio.{metric.removeprefix('load.')}.{numerator.split('-')[-1]}_over_{denominator.split('-')[-1]}"
            out.append(Entry(name, rest, entry.value / base.value, "ratio", "lower"))
    return out


def write(folder: Path, summary: Summary) -> Path:
    path = Path(folder) / "summary.json"
    path.write_text(json.dumps(summary.to_dict(), indent=2, sort_keys=True))
    return path


def read(path: Path) -> Summary:
    """A summary.json, or the one in a run folder; refuses newer formats."""
    path = Path(path)
    if path.is_dir():
        path = path / "summary.json"
    if not path.is_file():
        from harness.errors import KqbenchError

        raise KqbenchError(f"{path} does not exist: give a run folder or a summary.json")
    return Summary.from_dict(json.loads(path.read_text()), str(path))
