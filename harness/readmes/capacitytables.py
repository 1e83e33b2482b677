"""README tables of a capacity run (`kqbench capacity`), from its committed files: `capacity.csv` (where
each design broke) and `tables/capacity_steps.parquet` (every step).

Specs (paths relative to the README): `capacity-breaks` and `capacity-steps`, each `run: FOLDER`.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from harness.readmes import inputs, markdown


def _read(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise inputs.missing(path)
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, keep_default_na=False,
                                                                                  na_values=[""])


def _missing(value) -> bool:
    return value is None or value == "" or (isinstance(value, float) and math.isnan(value))


def _plain(value, digits: int = 0) -> str:
    """1000 / 0.42: no thousands separator (loads and pending read as sizes); - when missing."""
    return "-" if _missing(value) else f"{float(value):.{digits}f}"


def breaks(spec: dict, folder: Path) -> str:
    """One row per design: its conclusion, the largest load held, the first broken and why."""
    frame = _read(folder / spec["run"] / "capacity.csv")
    rows = [[r.design, r.conclusion, _plain(r.max_held), _plain(r.first_broken), "-" if _missing(r.broke_on) else r.broke_on,
             "-" if _missing(r.detail) else r.detail] for r in frame.itertuples()]
    return markdown.table(["design", "conclusion", "max held", "first broken", "broke on", "at the first broken step"], rows)


def _object(size) -> str:
    return "-" if _missing(size) else f"{size / 1024:.0f} KiB"


def steps(spec: dict, folder: Path) -> str:
    """One row per step of every design, in the order the search took them."""
    frame = _read(folder / spec["run"] / "tables" / "capacity_steps.parquet")
    # Runs since the scheduler's own request time and the cores over the hold were recorded show them too.
    costs = "machine_cores" in frame.columns and frame["machine_cores"].notna().any()
    rows = []
    for r in frame.itertuples():
        held = "held" if r.held else f"BROKE: {r.broken}"
        writes = f"{_plain(r.position_writes_per_second)} ({_plain(r.position_writes_demanded_per_second)})"
        rows.append([r.design, str(r.step + 1), str(r.load), r.stage, held, _plain(r.pending),
                     _plain(r.admissions_per_second, 1), writes, _plain(r.staleness_p99_seconds, 1),
                     _plain(r.query_p99_seconds, 2), _plain(r.bystander_p99_seconds, 2), _object(r.largest_object_bytes),
                     f"{r.apiserver_rss_bytes / (1 << 30):.2f} GiB"]
                    + ([_ms(r.visibility_server_p99_seconds),
                        f"{_plain(r.apiserver_cores, 2)} / {_plain(r.scheduler_cores, 2)} / {_plain(r.others_cores, 2)}"
                        f" / {_plain(r.machine_cores, 2)}"] if costs else []))
    return markdown.table(["design", "step", "load", "stage", "held", "pending", "admissions/s",
                           "position writes/s (demanded)", "staleness p99 s", "query p99 s", "bystander p99 s",
                           "largest object", "apiserver RSS"]
                          + (["scheduler's own time per query, p99",
                              "cores over the hold: kube-apiserver / scheduler / others / machine"] if costs else []),
                          rows)


def _ms(seconds: float) -> str:
    return "-" if _missing(seconds) else f"{seconds * 1000:.1f} ms"


def _verdict(row) -> str:
    held = "-" if _missing(row.max_held) else f"{row.max_held:,.0f}"
    broke = "-" if _missing(row.first_broken) else f"{row.first_broken:,.0f}"
    why = row.detail if row.conclusion == "broke" and not _missing(row.detail) else row.conclusion
    return f"{held} / {broke} ({why})"


def spread(spec: dict, folder: Path) -> str:
    """Where each design broke in several runs side by side: `runs: {label: [folder, ...]}`, a design
    taken from the first of a label's folders whose capacity.csv has it (a design run on its own)."""
    columns: dict[str, list[str]] = spec["runs"]
    found: dict[str, dict[str, str]] = {}
    for label, folders in columns.items():
        for name in folders:
            for row in _read(folder / name / "capacity.csv").itertuples():
                found.setdefault(row.design, {}).setdefault(label, f"{_verdict(row)}"
                                                            + ("" if name == folders[0] else f", `{name}/`"))
    rows = [[design, *(cells.get(label, "-") for label in columns)] for design, cells in found.items()]
    return markdown.table(["design", *(f"{label}: held / broke" for label in columns)], rows)
