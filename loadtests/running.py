"""Run load from any process without importing Locust: the engine runs in a child process.

    result = running.run(plan, out_dir)        # blocks for about plan.run_time seconds
    result.totals / result.history / result.failures  # pandas frames (see loadtests.frames)
    result.hdr                                 # HDR latency histograms per name (loadtests.recording)

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
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from loadtests import frames, recording, settings as load_settings

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
    workers: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=frames.WORKER_COLUMNS))
    """One row per worker that joined the master: worker id, host, pid, requests, failures, cpu_seconds."""
    hdr: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=recording.COLUMNS))
    """One row per (verb, name): every request's latency in an HDR histogram (us), encoded (loadtests.histograms)."""

    def names(self) -> list[str]:
        return list(self.totals["name"])


def _optional(path: Path, columns: list[str]) -> pd.DataFrame:
    """A frame that older runs did not write: empty with its columns then."""
    return pd.read_parquet(path) if path.is_file() else pd.DataFrame(columns=columns)


def read_result(out_dir: Path) -> LoadResult:
    return LoadResult(history=pd.read_parquet(out_dir / "history.parquet"),
                      totals=pd.read_parquet(out_dir / "totals.parquet"),
                      failures=pd.read_parquet(out_dir / "failures.parquet"),
                      summary=json.loads((out_dir / "summary.json").read_text()), out_dir=out_dir,
                      latencies=_optional(out_dir / "latencies.parquet", frames.LATENCY_COLUMNS),
                      workers=_optional(out_dir / "workers.parquet", frames.WORKER_COLUMNS),
                      hdr=_optional(out_dir / "hdr.parquet", recording.COLUMNS))  # engine.HDR_FILE


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _stop_group(process: subprocess.Popen, grace: float) -> None:
    """SIGTERM the engine (it stops its workers), then SIGKILL whatever is left of its group."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _kill_group(process)
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
            _kill_group(process)
    refused = out / "settings-error.txt"  # engine.SETTINGS_ERROR_FILE (not imported: it would load Locust)
    if process.returncode == 2 and refused.exists():
        raise load_settings.SettingsError(refused.read_text().strip())
    missing = out / "workers-error.txt"  # engine.WORKERS_ERROR_FILE
    if process.returncode == 3 and missing.exists():
        raise LoadError(missing.read_text().strip())
    if process.returncode != 0:
        tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
        raise LoadError(f"load run failed (exit {process.returncode}); log {log_path}:\n{tail}")
    return read_result(out)


WORKER_REJOIN, WORKER_RETRY, WORKER_NO_MASTER, WORKER_REFUSED = 10, 11, 3, 4
"""loadtests.worker's exit statuses (not imported: it would load Locust)."""
MAX_WORKER_SESSIONS = 1000
"""Worker processes one `serve_as_worker` call starts at most (a scenario runs one master per load phase)."""


def serve_as_worker(master_host: str, master_port: int, locustfile: str = BUILTIN_LOCUSTFILE,
                    connect_timeout: float = 120.0, clock=time.monotonic) -> int:
    """Be a Locust worker for the master at host:port, and for the next ones it asks us to wait for.

    Returns how many masters were served. Each session is a child process in its own group, killed
    in `finally`; a session ends when its master quits or its heartbeats stop (Locust: 60 s)."""
    command = [sys.executable, "-m", "loadtests.worker", "--master-host", master_host, "--master-port",
               str(master_port), "--locustfile", locustfile, "--connect-timeout", str(connect_timeout)]
    served = 0
    waiting_since = clock()
    for _session in range(MAX_WORKER_SESSIONS):
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            status = process.wait()
        except BaseException:
            _stop_group(process, grace=10.0)
            raise
        finally:
            _kill_group(process)
        if status == WORKER_RETRY and clock() - waiting_since < connect_timeout:
            continue  # acknowledged by a master on its way out: connect again, to the next one
        if status in (WORKER_NO_MASTER, WORKER_RETRY):
            if served == 0:
                raise LoadError(f"no kqbench master answered at {master_host}:{master_port} within "
                                f"{connect_timeout:.0f}s: start `kqbench load --master` there first, or check that "
                                "this host can reach that address")
            return served  # the last phase's master asked us back, and no next one came: the run is over
        if status == WORKER_REFUSED:
            raise LoadError(f"the master at {master_host}:{master_port} refused this worker (reason above)")
        if status not in (0, WORKER_REJOIN):
            raise LoadError(f"the worker process failed (exit {status}) after serving {served} masters")
        served += 1
        if status == 0:
            return served
        waiting_since = clock()
    return served
