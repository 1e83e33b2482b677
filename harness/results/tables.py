"""Tidy tables on disk: every table as parquet (for tools) and CSV (for eyes and diff).

The canonical table is `observations`, one row per observation:
case, source, metric, labels (JSON text, sorted keys), phase, t, value.
Other tables (metrics' per-phase summary, SLO verdicts, census, load history/totals) keep their own
columns and gain `case` as their first column. `meta.json` next to them keeps, per case, what the
measurements said about their tables (scrape schema version, phase edges, flagged etcd keys);
reading refuses tables whose measurements are of a newer schema than this kqbench knows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import orjson
import pandas as pd

from harness.errors import KqbenchError
from harness.metrics import frames as measured

OBSERVATION_COLUMNS = ("case", "source", "metric", "labels", "phase", "t", "value")
FOLDER = "tables"
META = "meta.json"
META_VERSION = 1
"""meta.json format; readers refuse newer ones. 1: {schema_version, cases: {case id: the measurements' meta}}."""


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


def write(folder: Path, tables: Mapping[str, list[pd.DataFrame] | pd.DataFrame],
          meta: Mapping[str, dict] | None = None) -> list[Path]:
    """Write each table (concatenated if given in parts) as tables/<name>.parquet and .csv, and the
    measurements' meta of each case as tables/meta.json."""
    out = Path(folder) / FOLDER
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if meta:
        path = out / META
        path.write_bytes(orjson.dumps({"schema_version": META_VERSION, "cases": dict(meta)},
                                      option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_SERIALIZE_NUMPY))
        written.append(path)
    for name, parts in sorted(tables.items()):
        frames = [parts] if isinstance(parts, pd.DataFrame) else [p for p in parts if p is not None]
        if not frames:
            continue
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0].reset_index(drop=True)
        frame.to_parquet(out / f"{name}.parquet", index=False)
        frame.to_csv(out / f"{name}.csv", index=False)
        written += [out / f"{name}.parquet", out / f"{name}.csv"]
    return written


def read_meta(folder: Path) -> dict[str, dict]:
    """The measurements' meta by case id ({} for runs older than meta.json); refuses newer schemas."""
    path = Path(folder) / FOLDER / META
    if not path.is_file():
        return {}
    data = orjson.loads(path.read_bytes())
    if not isinstance(data.get("schema_version"), int) or data["schema_version"] > META_VERSION:
        raise KqbenchError(f"{path} has schema_version {data.get('schema_version')!r}, not one this kqbench reads "
                           f"(up to {META_VERSION}): upgrade kqbench")
    for case, meta in data.get("cases", {}).items():
        version = meta.get("schema_version")
        if isinstance(version, int) and version > measured.SCHEMA_VERSION:
            raise KqbenchError(f"{path}: case {case} was measured with table schema {version}, newer than this "
                               f"kqbench reads ({measured.SCHEMA_VERSION}): upgrade kqbench")
    return data.get("cases", {})


def read(folder: Path) -> dict[str, pd.DataFrame]:
    """Every table of a run folder by name (parquet preferred, CSV when parquet is missing); checks meta.json."""
    out = Path(folder) / FOLDER
    tables: dict[str, pd.DataFrame] = {}
    if not out.is_dir():
        return tables
    read_meta(folder)
    for path in sorted(out.iterdir()):
        name, suffix = path.stem, path.suffix
        if suffix == ".parquet":
            tables[name] = pd.read_parquet(path)
        elif suffix == ".csv" and name not in tables and not (out / f"{name}.parquet").exists():
            tables[name] = pd.read_csv(path)
    return tables
