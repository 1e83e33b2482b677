"""README tables of the scheduler-on-the-cluster benchmark (benchmarks/bench_scheduler_cluster.py until 251cd23; now the heldqueue driver), from
the JSON files of one output folder: `<implementation>.json` per implementation and `summary.json`.

Spec of a `scheduler-cluster` block (paths relative to the README):

    folder: scheduler-cluster-100000
    columns: {ours: reference, Kueue: kueue}      # header -> the file's stem
    rows: [created, processed, page_idle]

A figure the file cannot support says so instead of a number: a p99 over fewer than 100 requests is
shown as the slowest of them, and CPU over an arm whose requests outlasted it (the slowest request
longer than the arm) is not shown, since it is not CPU over the requests; nor is CPU a file no longer
holds (`cores_used: null`, with `cores_used_dropped` saying why).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.errors import KqbenchError
from harness.readmes import inputs, markdown
from harness.stats import intervals

READ_ARMS = ("cq_page_idle", "cq_page_churn", "cq_page_idle_no_page_cache", "cq_page_churn_no_page_cache")


def _load(path: Path) -> dict:
    if not path.is_file():
        raise inputs.missing(path)
    return json.loads(path.read_text())


def _ms(value: float) -> str:
    return f"{markdown.number(value)} ms"


def _p99(arm: dict) -> str:
    """p99 in ms, or the slowest request when there are too few for a p99."""
    if not intervals.has_quantile(0.99, arm["requests"]) or arm.get("p99_ms") is None:
        return f"{_ms(arm['max_ms'])} (slowest of {arm['requests']}, too few for a p99)"
    return _ms(arm["p99_ms"])


def _rate(value: float) -> str:
    return markdown.number(value, 1 if value < 100 else 0)


def _outlasted(arm: dict) -> bool:
    """Whether the slowest request took longer than the arm (requests / rate) it was sent in."""
    return arm["max_ms"] / 1000 > arm["requests"] / arm["per_second"]


def _page(name: str) -> Callable[[dict], str]:
    def cell(result: dict) -> str:
        arm = result["arms"].get(name)
        return "" if arm is None else f"{_p99(arm)} / {_rate(arm['per_second'])}"
    return cell


def _no_cache(result: dict) -> str:
    arms = [result["arms"].get(f"{name}_no_page_cache") for name in ("cq_page_idle", "cq_page_churn")]
    return "" if None in arms else " / ".join(_p99(arm) for arm in arms)


def _cores(result: dict) -> str:
    arms = [result["arms"][name] for name in READ_ARMS if name in result["arms"]]
    if any(_outlasted(arm) for arm in arms):
        return "not measured: its requests outlasted the arm"
    if any(arm["cores_used"] is None for arm in arms):  # dropped from the file: `cores_used_dropped` says why
        return "not kept: measured over another window than its readings' (`cores_used_dropped`)"
    used = sorted(arm["cores_used"]["scheduler"] for arm in arms)
    return markdown.number(used[0], 2) if used[0] == used[-1] else f"{markdown.number(used[0], 2)}-{markdown.number(used[-1], 2)}"


def _processed(result: dict) -> str:
    milestone = result["processed"]["milestone"]
    if milestone["reached"]:
        return markdown.duration(result["processed"]["seconds_from_start"], 1)
    return (f"not reached: {markdown.number(milestone['done'])} in {markdown.duration(milestone['seconds'], 0)} "
            f"({markdown.number(milestone['rate_per_second'], 1)}/s)")


def _admissions(result: dict) -> str:
    admissions = result["admissions"]
    return f"{_rate(admissions['per_second'])} ({markdown.number(admissions['admitted'])} admitted)"


def _etcd_bytes(result: dict) -> str:
    etcd = result["etcd"]
    stored, created = etcd["bytes_per_workload"], etcd["bytes_per_workload_as_created"]
    shown = markdown.number(stored)
    return shown if markdown.number(created) == shown else f"{shown} ({markdown.number(created)} as created)"


ROWS: dict[str, tuple[str, Callable[[dict], str]]] = {
    "created": ("Workloads created (before the scheduler starts)",
                lambda r: markdown.duration(r["create"]["seconds"], 0)),
    "processed": ("every Workload processed, from the scheduler's start", _processed),
    "page_idle": ("page of 100, idle queue: p99 / pages/s", _page("cq_page_idle")),
    "page_churn": ("the same under churn: p99 / pages/s", _page("cq_page_churn")),
    "no_cache": ("our page cache off: idle / churn p99", _no_cache),
    "proxy": ("proxy ceiling in the same arm: p99 / req/s", _page("proxy_ceiling")),
    "cores": ("scheduler cores during the reads", _cores),
    "rss": ("RSS with every Workload pending", lambda r: f"{markdown.number(r['processed']['scheduler_rss_mib'])} MiB"),
    "cpu_per_pending": ("scheduler CPU per pending Workload (start to processed)",
                        lambda r: f"{markdown.number(r['processed']['cpu_ms_per_pending_workload'], 3)} ms"),
    "writes_per_pending": ("apiserver writes per pending Workload",
                           lambda r: markdown.number(r["processed"]["apiserver_writes_per_pending_workload"], 3)),
    "admissions": ("admissions/s, quota raised (bounded)", _admissions),
    "writes_per_admission": ("apiserver writes per admission",
                             lambda r: markdown.number(r["admissions"]["apiserver_writes_per_admission"], 2)),
    "etcd_bytes": ("etcd bytes per Workload", _etcd_bytes),
}


def cases(spec: dict, folder: Path) -> str:
    """The `scheduler-cluster` table: one column per implementation's file, one row per name of ROWS
    (a name or {name: label})."""
    run = folder / spec["folder"]
    results = {label: _load(run / f"{stem}.json") for label, stem in spec["columns"].items()}
    lines = []
    for item in spec["rows"]:
        name, label = next(iter(item.items())) if isinstance(item, dict) else (item, None)
        if name not in ROWS:
            raise KqbenchError(f"unknown row {name!r} (known: {', '.join(ROWS)})")
        lines.append([label or ROWS[name][0], *(ROWS[name][1](result) for result in results.values())])
    return markdown.table(["", *results], lines)
