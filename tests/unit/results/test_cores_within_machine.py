"""No committed figure of a process's cores exceeds the cores of the machine that measured it, nor do the
processes measured over one window together.

A figure above the machine was CPU seconds divided by a window shorter than the one they were read over
(bench_scheduler_cluster's admission window: 6.66 cores on 2; the collector's process samples stamped before
the scrapes they followed: 3.76 cores of kube-apiserver in a 0.29 s phase). Figures that cannot be
recomputed are dropped in their file (`cores_used: null` beside `cores_used_dropped`), and skipped here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from harness.results import storing

ROOT = Path(__file__).resolve().parents[3]

PER_FIGURE_ROUNDING = 0.005
"""JSON figures are written to two decimals."""
TICK_SECONDS = 0.01
"""/proc counts CPU in ticks of 1/USER_HZ = 10 ms, so a delta of two truncated readings is off by less than one
tick: less than 0.01/W cores for a window of W seconds (0.03 in a 0.3 s setup phase, 0.001 over 10 s)."""
SHORTEST_JSON_WINDOW = 10.0
"""Seconds of the shortest window a JSON figure without its own `window_seconds` was measured over (the
cluster benchmark's idle window and its shortest read arm and admission bound are 10 s or more)."""
SAME_WINDOW = 0.01
"""Processes of one phase whose windows differ by less than this share count as read over one window."""

JSON_WINDOWS = ("cores_used", "idle_cores")
"""Keys of a {process: cores} object read over one window, in the cluster benchmark's files."""
JSON_SCALARS = ("apiserver_cpu_cores", "apiserver_cores_whole_run", "generator_cores", "others_cores")
"""Keys of one cores figure (watch-cache rows, the load generator, the bring-up's rest of the machine)."""
MACHINE_FILES = ("run.json", "summary.json", "tables/meta.json")


def _committed() -> list[str]:
    return storing.tracked(ROOT / "results")[1]


def _cpus_in(data: object) -> int | None:
    """The logical CPUs a run, summary or meta file records (`machine`, `fingerprint` or `metadata`)."""
    if not isinstance(data, dict):
        return None
    for key, field in (("machine", "cpus"), ("fingerprint", "cpus"), ("metadata", "cpu_count")):
        found = data.get(key)
        if isinstance(found, dict) and isinstance(found.get(field), int):
            return found[field]
    return None


def _machine_cpus(name: str, committed: set[str], cache: dict[str, int | None]) -> int | None:
    """The CPUs recorded in the file itself or in the nearest run, summary or meta file of its folders."""
    path = Path(name)
    candidates = [name] if name.endswith(".json") else []
    candidates += [str(parent / machine) for parent in path.parents for machine in MACHINE_FILES]
    for candidate in candidates:
        if candidate not in committed:
            continue
        if candidate not in cache:
            try:
                cache[candidate] = _cpus_in(json.loads((ROOT / candidate).read_text()))
            except (ValueError, UnicodeDecodeError):
                cache[candidate] = None
        if cache[candidate]:
            return cache[candidate]
    return None


def _json_windows(data: object, where: str = "") -> Iterator[tuple[str, dict[str, float], float, float]]:
    """(where, {process: cores}, window seconds, rounding) of every cores figure in a JSON document."""
    if isinstance(data, list):
        for index, item in enumerate(data):
            yield from _json_windows(item, f"{where}[{index}]")
    if not isinstance(data, dict):
        return
    window = data.get("window_seconds") if isinstance(data.get("window_seconds"), (int, float)) else None
    for key, value in data.items():
        if key in JSON_WINDOWS and isinstance(value, dict):
            yield f"{where}.{key}", value, window or SHORTEST_JSON_WINDOW, PER_FIGURE_ROUNDING
        elif key in JSON_SCALARS and isinstance(value, (int, float)) and not isinstance(value, bool):
            yield f"{where}.{key}", {key: value}, window or SHORTEST_JSON_WINDOW, PER_FIGURE_ROUNDING
        else:
            yield from _json_windows(value, f"{where}.{key}")


def _columns(path: Path) -> list[str]:
    if path.suffix == ".parquet":
        return list(pq.read_schema(path).names)
    with path.open() as handle:
        return handle.readline().strip().split(",")


def _table_windows(path: Path) -> Iterator[tuple[str, dict[str, float], float, float]]:
    """Cores columns of a table row by row, and a summary table's process CPU rates per (case, phase)."""
    columns = _columns(path)
    cores = [c for c in columns if "cores" in c and c != "cores_available"]
    summary = {"source", "metric", "stat", "value", "labels", "phase"} <= set(columns)
    if not cores and not summary:
        return
    frame = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    for column in cores:
        for index, value in pd.to_numeric(frame[column], errors="coerce").dropna().items():
            yield f"{column}[{index}]", {column: float(value)}, SHORTEST_JSON_WINDOW, 0.0
    if not summary:
        return
    cpu = frame[(frame["source"] == "process") & (frame["metric"] == "cpu_seconds")]
    keys = [c for c in ("case", "phase") if c in cpu.columns]
    rates = cpu[cpu["stat"] == "rate"].set_index([*keys, "labels"])["value"]
    deltas = cpu[cpu["stat"] == "delta"].set_index([*keys, "labels"])["value"]
    windows = (deltas / rates).dropna()  # seconds each process was read over (a zero rate says nothing)
    for group, found in windows.groupby(level=list(range(len(keys)))):
        longest = found.max()
        # a process restarted or watched late in the phase has its own shorter window: alone, not in the sum
        together = found[found >= longest * (1 - SAME_WINDOW)].index
        yield f"rates {group}", {str(k[-1]): float(rates[k]) for k in together}, float(longest), 0.0
        for key in found.index.difference(together):
            yield f"rates {group}", {str(key[-1]): float(rates[key])}, float(found[key]), 0.0


def _beyond_the_machine() -> list[str]:
    committed = set(_committed())
    cache: dict[str, int | None] = {}
    found = []
    for name in sorted(committed):
        path = ROOT / name
        if name.endswith(".json"):
            try:
                windows = list(_json_windows(json.loads(path.read_text())))
            except (ValueError, UnicodeDecodeError):
                continue
        elif name.endswith((".parquet", ".csv")) and "/tables/" in name:
            windows = list(_table_windows(path))
        else:
            continue
        if not windows:
            continue
        cpus = _machine_cpus(name, committed, cache)
        if cpus is None:
            found.append(f"{name}: cores figures, but no machine's CPU count in it or a run/summary/meta above it")
            continue
        for where, cores, seconds, rounding in windows:
            jitter = rounding + TICK_SECONDS / seconds  # per process
            figures = {process: value for process, value in cores.items() if isinstance(value, (int, float))}
            for process, value in figures.items():
                if value > cpus + jitter:
                    found.append(f"{name} {where}: {process} {value:.2f} cores on {cpus}")
            if sum(figures.values()) > cpus + jitter * len(figures):
                found.append(f"{name} {where}: {sum(figures.values()):.2f} cores in all on {cpus}")
    return found


def test_no_committed_cores_figure_exceeds_the_machine_that_measured_it():
    assert _beyond_the_machine() == []


def test_a_figure_beyond_the_machine_is_found(tmp_path, monkeypatch):
    run = tmp_path / "results" / "peer" / "run"
    (run / "r1").mkdir(parents=True)
    (run / "summary.json").write_text(json.dumps({"machine": {"cpus": 2}}))
    admissions = {"admissions": {"cores_used": {"kube-apiserver": 3.94, "scheduler": 2.62}},
                  "arms": {"idle": {"window_seconds": 10.2, "cores_used": {"kube-apiserver": 1.2, "scheduler": 0.9}},
                           "dropped": {"cores_used": None, "cores_used_dropped": "why"}}}
    (run / "r1" / "kueue.json").write_text(json.dumps(admissions))
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}._committed",
                        lambda: ["results/peer/run/summary.json", "results/peer/run/r1/kueue.json"])
    assert _beyond_the_machine() == [
        "results/peer/run/r1/kueue.json .admissions.cores_used: kube-apiserver 3.94 cores on 2",
        "results/peer/run/r1/kueue.json .admissions.cores_used: scheduler 2.62 cores on 2",
        "results/peer/run/r1/kueue.json .admissions.cores_used: 6.56 cores in all on 2",
        "results/peer/run/r1/kueue.json .arms.idle.cores_used: 2.10 cores in all on 2"]


def test_a_summary_tables_rate_beyond_the_machine_is_found(tmp_path, monkeypatch):
    run = tmp_path / "results" / "tas" / "run"
    (run / "tables").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"machine": {"cpus": 2}}))
    rows = [{"case": "c", "source": "process", "metric": "cpu_seconds", "stat": stat, "labels": component,
             "phase": "setup", "t": 0.29, "value": value}
            for component, delta in (("kube-apiserver", 1.1), ("etcd", 0.35))
            for stat, value in (("delta", delta), ("rate", delta / 0.29))]
    pd.DataFrame(rows).to_parquet(run / "tables" / "summary.parquet", index=False)
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}._committed",
                        lambda: ["results/tas/run/run.json", "results/tas/run/tables/summary.parquet"])
    assert _beyond_the_machine() == [
        "results/tas/run/tables/summary.parquet rates ('c', 'setup'): kube-apiserver 3.79 cores on 2",
        "results/tas/run/tables/summary.parquet rates ('c', 'setup'): 5.00 cores in all on 2"]
