"""Run load from any process without importing Locust: the engine runs in a child process.

    result = running.run(plan, out_dir)        # blocks for about plan.run_time seconds
    result.totals / result.history / result.failures  # pandas frames (see loadtests.frames)

The child (and its Locust workers) form one process group: on a time-out, an error or Ctrl-C the
group is asked to stop, then killed, so no load process outlives the call.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from loadtests import frames, settings as load_settings

BUILTIN_LOCUSTFILE = str(Path(__file__).with_name("locustfile.py"))
STARTUP_SECONDS = 90.0
"""Allowance beyond run_time for imports, workers connecting, final worker reports and teardown."""


class LoadError(RuntimeError):
    """The load run failed; the message carries the tail of its log."""


@dataclass(slots=True)
class LoadResult:
    history: pd.DataFrame
    """One row per (interval, request name): t, verb, name, requests, failures, rps, bytes, p50/90/95/99_ms, max_ms."""
    totals: pd.DataFrame
    """One row per request name for the whole run: requests, failures, successes, rps, bytes, mean and percentiles."""
    failures: pd.DataFrame
    """One row per (verb, name, reason): occurrences."""
    summary: dict
    """stopped_by, load_seconds, wall_seconds, requests, failures, workers, cpu_seconds_master/_workers."""
    out_dir: Path
    latencies: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=frames.LATENCY_COLUMNS))
    """One row per (verb, name, ms): the whole run's response-time histogram."""

    def names(self) -> list[str]:
        return list(self.totals["name"])


def read_result(out_dir: Path) -> LoadResult:
    latencies = out_dir / "latencies.parquet"
    return LoadResult(history=pd.read_parquet(out_dir / "history.parquet"),
                      totals=pd.read_parquet(out_dir / "totals.parquet"),
                      failures=pd.read_parquet(out_dir / "failures.parquet"),
                      summary=json.loads((out_dir / "summary.json").read_text()), out_dir=out_dir,
                      latencies=pd.read_parquet(latencies) if latencies.is_file() else
                      pd.DataFrame(columns=frames.LATENCY_COLUMNS))


def _stop_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM the engine (it stops its workers), then SIGKILL whatever is left of its group."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    if process.poll() is None:
        process.wait(timeout=10)


def run(plan: load_settings.RunPlan, out_dir: str | Path | None = None, *, show_output: bool = False,
        timeout: float | None = None) -> LoadResult:
    """Run `plan` in a child process and return its frames; bounded by plan.run_time + STARTUP_SECONDS."""
    plan.validate()
    out = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix="kqbench-load-"))
    out.mkdir(parents=True, exist_ok=True)
    plan_file = out / "plan.json"
    plan_file.write_text(plan.to_json())
    log_path = out / "engine.log"
    command = [sys.executable, "-m", "loadtests.engine", "--plan", str(plan_file), "--out", str(out)]
    limit = timeout if timeout is not None else plan.run_time + STARTUP_SECONDS + 2 * plan.worker_start_timeout
    with open(log_path, "wb") as log:
        sink = None if show_output else log
        process = subprocess.Popen(command, stdout=sink, stderr=sink if sink else None, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
        try:
            process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            _stop_group(process, grace=20.0)
            raise LoadError(f"load run exceeded {limit:.0f}s and was stopped; log: {log_path}") from None
        except BaseException:
            _stop_group(process, grace=20.0)
            raise
        finally:
            # Workers are in the engine's group; none may outlive the run, whatever happened.
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    refused = out / "settings-error.txt"  # engine.SETTINGS_ERROR_FILE (not imported: it would load Locust)
    if process.returncode == 2 and refused.exists():
        raise load_settings.SettingsError(refused.read_text().strip())
    if process.returncode != 0:
        tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
        raise LoadError(f"load run failed (exit {process.returncode}); log {log_path}:\n{tail}")
    return read_result(out)
