"""`kqbench run` interrupted with SIGINT or SIGTERM at three points: every process it started is gone
(by pid and by the cluster's work folder), finished cases stay readable by `report` and `compare`,
and run.json says where the run stopped. A 5-node `tiny` with 30 pending Workloads and 5 s of churn."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from harness.clusters import kwok, processes
from harness.running import runner
from tests.integration.conftest import run_cli

pytestmark = pytest.mark.integration

SMALL = ("--set", "cluster.nodes=5", "--set", "phases.fill.pending=30", "--set", "phases.churn.seconds=5")
FIRST, SECOND = "strategy=aggregated-snapshot,r0", "strategy=aggregated-indexed,r0"
LINE_TIMEOUT = 240.0
EXIT_TIMEOUT = 180.0


class Lines:
    """The run's progress lines (stderr), read in a thread so that a full pipe never blocks the run."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self._changed:
                self.lines.append(line.rstrip("\n"))
                self._changed.notify_all()

    def wait_for(self, *markers: str, timeout: float = LINE_TIMEOUT) -> None:
        """Until the markers have appeared in this order."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found, at = True, 0
                for marker in markers:
                    at = next((i for i in range(at, len(self.lines)) if marker in self.lines[i]), -1)
                    if at < 0:
                        found = False
                        break
                if found:
                    return
                left = deadline - time.monotonic()
                assert left > 0, f"never saw {markers}; last lines: {self.lines[-10:]}"
                self._changed.wait(min(left, 1.0))


def _ctrl_c_as_in_a_terminal() -> None:
    # A job started in the background by a non-interactive shell (a CI runner's) inherits SIGINT
    # ignored, and Python then installs no KeyboardInterrupt: the run would be a user's terminal only
    # with the default disposition back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.parametrize("sig, markers, stopped_at, statuses", [
    (signal.SIGINT, (f"case 1/2 {FIRST}", "  - cluster ..."), f"case {FIRST}: cluster", ["interrupted", "skipped"]),
    (signal.SIGTERM, (f"case 1/2 {FIRST}", "  - churn ..."), f"case {FIRST}: churn", ["interrupted", "skipped"]),
    (signal.SIGINT, (f"case 2/2 {SECOND}", "  - scheduler: ok"), f"case {SECOND}: ", ["ok", "interrupted"]),
], ids=["sigint-at-bringup", "sigterm-in-churn", "sigint-in-the-second-case"])
def test_an_interrupted_run_leaves_no_process_and_says_where_it_stopped(binaries, state_dir, tmp_path, sig, markers,
                                                                       stopped_at, statuses):
    out = tmp_path / "runs"
    run = subprocess.Popen([sys.executable, "-m", "harness", "run", "tiny", "--out", str(out), "--no-report", *SMALL],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
                           start_new_session=True, preexec_fn=_ctrl_c_as_in_a_terminal)
    started: set[int] = set()
    try:
        lines = Lines(run.stderr)
        lines.wait_for(*markers)
        started = {p.pid for p in psutil.Process(run.pid).children(recursive=True)}
        run.send_signal(sig)
        assert run.wait(EXIT_TIMEOUT) != 0
    finally:
        if run.poll() is None:  # the test failed before the run ended: stop it the same way, then hard
            run.send_signal(signal.SIGTERM)
            try:
                run.wait(EXIT_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait(30)
    [folder] = [p for p in out.iterdir() if p.is_dir()]
    alive = [pid for pid in started if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], f"still running after the interrupt: {alive}"
    for index in range(2):
        marker = str(kwok.cluster_dir(runner.cluster_name(folder.name, index))) + "/"
        assert processes.find_by_path(marker) == [], f"processes of case {index} outlived the run"
    record = json.loads((folder / "run.json").read_text())
    # the step the signal landed in (the second case's: whichever followed its scheduler's start)
    assert record["status"] == "interrupted" and record["stopped_at"].startswith(stopped_at), record["stopped_at"]
    assert [c["status"] for c in record["cases"]] == statuses
    report = run_cli("report", str(folder), timeout=300)
    assert report.returncode == 0, report.stderr[-2000:]
    if statuses[0] == "ok":  # the finished case's tables and summary are there for compare
        summary = json.loads((folder / "summary.json").read_text())
        assert any(key.startswith("apiserver.write_qps") for key in summary["metrics"])
        compare = run_cli("compare", str(folder), str(folder), timeout=120)
        assert compare.returncode == 0, compare.stdout[-2000:] + compare.stderr[-2000:]
