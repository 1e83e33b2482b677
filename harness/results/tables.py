"""Tidy tables on disk: every table as parquet (for tools) and CSV (for eyes and diff).

The canonical table is `observations`, one row per observation:
case, source, metric, labels (JSON text, sorted keys), phase, t, value.
Other tables (metrics' per-phase summary, SLO verdicts, census, load history/totals) keep their own
columns and gain `case` as their first column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson
import pandas as pd

OBSERVATION_COLUMNS = ("case", "source", "metric", "labels", "phase", "t", "value")
FOLDER = "tables"


def labels_text(labels: Mapping[str, object] | None) -> str:
    return orjson.dumps({k: str(v) for k, v in (labels or {}).items()}, option=orjson.OPT_SORT_KEYS).decode()


def observations(rows: Iterable[tuple[str, str, str, Mapping | None, str, float, float]]) -> pd.DataFrame:
    """Rows of (case, source, metric, labels dict, phase, t, value) as the canonical tidy frame."""
    data = [(c, s, m, labels_text(lab), p, float(t), float(v)) for c, s, m, lab, p, t, v in rows]
    return pd.DataFrame(data, columns=list(OBSERVATION_COLUMNS))


def with_case(frame: pd.DataFrame, case: str) -> pd.DataFrame:
    framed = frame.copy()
    framed.insert(0, "case", case)
    return framed


def bringup_rows(case: str, report: Mapping) -> list[tuple]:
    """A BringUpReport (as dict) as observations of source `bringup`, phase `bringup`."""
    rows = []
    for metric in ("control_plane_seconds", "node_create_seconds", "nodes_per_second", "node_ready_seconds",
                   "nodes_ready", "nodes_requested", "total_seconds", "etcd_db_size_bytes"):
        value = report.get(metric)
        if value is not None:
            rows.append((case, "bringup", metric, {}, "bringup", float(report.get("total_seconds") or 0.0), value))
    for component, described in (report.get("processes") or {}).items():
        if described.get("alive"):
            rows.append((case, "bringup", "rss_bytes", {"component": component}, "bringup", 0.0, described["rss_bytes"]))
    return rows


def append(tables: dict[str, list[pd.DataFrame]], name: str, frame: pd.DataFrame | None) -> None:
    if frame is not None and len(frame.columns):
        tables.setdefault(name, []).append(frame)


def write(folder: Path, tables: Mapping[str, list[pd.DataFrame] | pd.DataFrame]) -> list[Path]:
    """Write each table (concatenated if given in parts) as tables/<name>.parquet and .csv."""
    out = Path(folder) / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, parts in sorted(tables.items()):
        frames = [parts] if isinstance(parts, pd.DataFrame) else [p for p in parts if p is not None]
        if not frames:
            continue
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
        frame.to_parquet(out / f"{name}.parquet", index=False)
        frame.to_csv(out / f"{name}.csv", index=False)
        written += [out / f"{name}.parquet", out / f"{name}.csv"]
    return written


def read(folder: Path) -> dict[str, pd.DataFrame]:
    """Every table of a run folder by name (parquet preferred, CSV when parquet is missing)."""
    out = Path(folder) / FOLDER
    tables: dict[str, pd.DataFrame] = {}
    if not out.is_dir():
        return tables
    for path in sorted(out.iterdir()):
        name, suffix = path.stem, path.suffix
        if suffix == ".parquet":
            tables[name] = pd.read_parquet(path)
        elif suffix == ".csv" and name not in tables and not (out / f"{name}.parquet").exists():
            tables[name] = pd.read_csv(path)
    return tables
