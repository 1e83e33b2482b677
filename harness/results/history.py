"""The nightly history: one small JSON file per night under results/history/<scenario>/.

A night is its summary's estimates (value, interval, n; no raw samples) with the run's date and git
sha, so a change point can be dated to a commit range. Files are named `<YYYYMMDD>-<sha12>.json`:
they sort by date, and two runs of one night at different commits are both kept.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from harness.errors import KqbenchError
from harness.results import runs, summaries

SCHEMA_VERSION = 1
"""History file format; readers refuse newer ones. 1: first format."""
HISTORY_DIR = Path("results") / "history"


@dataclass(frozen=True, slots=True)
class Point:
    value: float
    low: float | None = None
    high: float | None = None
    n: int | None = None


@dataclass(slots=True)
class Night:
    date: str
    """When the run started (ISO 8601, UTC)."""
    git_sha: str
    run_id: str
    scenario: str
    metrics: dict[str, Point] = field(default_factory=dict)
    """summary key (`metric @ point`) -> its estimate."""

    def to_dict(self) -> dict:
        return {"schema_version": SCHEMA_VERSION, "date": self.date, "git_sha": self.git_sha, "run_id": self.run_id,
                "scenario": self.scenario,
                "metrics": {k: {"value": p.value, "low": p.low, "high": p.high, "n": p.n}
                            for k, p in sorted(self.metrics.items())}}

    @classmethod
    def from_dict(cls, data: dict, source: str) -> "Night":
        runs.check_version(data, SCHEMA_VERSION, source)
        try:
            metrics = {k: Point(float(v["value"]), v.get("low"), v.get("high"), v.get("n"))
                       for k, v in (data.get("metrics") or {}).items()}
            return cls(str(data["date"]), str(data.get("git_sha", "")), str(data.get("run_id", "")),
                       str(data.get("scenario", "")), metrics)
        except (KeyError, TypeError, ValueError) as error:
            raise KqbenchError(f"{source}: not a kqbench history file ({error!r})") from None


def night_of(run: runs.RunRecord, summary: summaries.Summary) -> Night:
    """The history entry of one run (pure)."""
    metrics = {key: Point(e.value, e.low, e.high, e.n) for key, e in summary.entries.items() if math.isfinite(e.value)}
    return Night(run.started_at, run.git_sha, run.run_id, run.scenario_name or summary.scenario, metrics)


def file_name(night: Night) -> str:
    day = night.date[:10].replace("-", "") or "undated"
    return f"{day}-{(night.git_sha or 'nogit')[:12]}.json"


def record(run_folder: Path, history_dir: Path = HISTORY_DIR) -> Path:
    """Append a run's summary to the history of its scenario; returns the file written."""
    run_folder = Path(run_folder)
    if not (run_folder / "run.json").is_file():
        raise KqbenchError(f"{run_folder} has no run.json: give a run folder (results/runs/<run-id>)")
    night = night_of(runs.read_run(run_folder), summaries.read(run_folder))
    folder = Path(history_dir) / night.scenario
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file_name(night)
    path.write_text(json.dumps(night.to_dict(), indent=1, sort_keys=True) + "\n")
    return path


def load(folder: Path) -> list[Night]:
    """Every night in one scenario's history folder, oldest first."""
    folder = Path(folder)
    if not folder.is_dir():
        raise KqbenchError(f"history folder {folder} does not exist: ci/nightly.sh writes it "
                           "(or `kqbench history --record RUN_FOLDER`)")
    nights = []
    for path in sorted(folder.glob("*.json")):
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as error:
            raise KqbenchError(f"{path}: not valid JSON ({error.msg} at line {error.lineno})") from None
        nights.append(Night.from_dict(data, str(path)))
    return sorted(nights, key=lambda night: (night.date, night.run_id))
