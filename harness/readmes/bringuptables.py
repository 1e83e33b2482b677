"""README tables of cluster bring-ups recorded by `kqbench cluster up --record FILE` (one JSON each).

Spec of a `bringup-records` block (paths relative to the README):

    records: {without Jobs: kwok-100k-nodes.json, with Jobs: kwok-100k-nodes-jobs.json}
    rows: [control_plane, posts, ready, total, etcd_db, "rss_cpu:kube-apiserver", rss_all]
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from harness.errors import KqbenchError
from harness.readmes import inputs, markdown


def _gib(size: float) -> str:
    return f"{size / (1 << 30):.2f} GiB"


def _rss_cpu(process: str) -> Callable[[dict], str]:
    def cell(record: dict) -> str:
        found = record["processes"].get(process)
        return "(not running)" if found is None else f"{_gib(found['rss_bytes'])} / {markdown.duration(found['cpu_seconds'], 1)}"
    return cell


def _rss_all(record: dict) -> str:
    ordered = sorted(record["processes"].items(), key=lambda item: -item[1]["rss_bytes"])
    return ", ".join(f"{name} {_gib(p['rss_bytes'])}" for name, p in ordered)


def _cores(record: dict) -> str:
    """Mean cores of each process from the cluster's start to every node Ready."""
    ordered = sorted(record["processes"].items(), key=lambda item: -item[1]["cpu_seconds"])
    return ", ".join(f"{name} {markdown.number(p['cpu_seconds'] / record['total_seconds'], 2)}" for name, p in ordered)


ROWS: dict[str, tuple[str, Callable[[dict], str]]] = {
    "control_plane": ("control plane up", lambda r: markdown.duration(r["control_plane_seconds"], 1)),
    "posts": ("Node POSTs", lambda r: f"{markdown.duration(r['node_create_seconds'], 1)} "
                                      f"({markdown.number(r['nodes_per_second'])} nodes/s)"),
    "ready": ("until every node Ready (after the last POST)", lambda r: markdown.duration(r["node_ready_seconds"], 1)),
    "total": ("total", lambda r: markdown.duration(r["total_seconds"], 1)),
    "etcd_db": ("etcd DB size", lambda r: f"{r['etcd_db_size_bytes'] / (1 << 20):.0f} MiB"),
    "rss_all": ("RSS at the end", _rss_all),
    "cores": ("mean cores from start to every node Ready", _cores),
}
"""Row name -> (label, cell). Also `rss_cpu:PROCESS`: its RSS at the end and CPU seconds in all."""


def records(spec: dict, folder: Path) -> str:
    """One column per recorded bring-up, one row per name (a name or {name: label})."""
    loaded = {}
    for label, name in spec["records"].items():
        path = folder / name
        if not path.is_file():
            raise inputs.missing(path)
        loaded[label] = json.loads(path.read_text())
    lines = []
    for item in spec["rows"]:
        name, label = next(iter(item.items())) if isinstance(item, dict) else (item, None)
        kind, _, process = name.partition(":")
        if name in ROWS:
            default, cell = ROWS[name]
        elif kind == "rss_cpu" and process:
            default, cell = f"{process} RSS / CPU", _rss_cpu(process)
        else:
            raise KqbenchError(f"unknown row {name!r} (known: {', '.join(ROWS)}, rss_cpu:PROCESS)")
        lines.append([label or default, *(cell(record) for record in loaded.values())])
    return markdown.table(["", *loaded], lines)
