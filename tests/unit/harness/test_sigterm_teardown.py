"""SIGTERM unwinds `kqbench` like Ctrl-C so clusters are torn down; a second SIGTERM arriving during that
teardown (`timeout` forwarding one while `pkill` matches the process too) must not cut it short. The test
run itself unwinds the same way, so the integration fixtures stop the clusters they started."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    from harness import cli
    cli.unwind_on_sigterm()
    try:
        print("ready", flush=True)
        time.sleep(30)
    except KeyboardInterrupt:
        print("unwinding", flush=True)
        time.sleep(1.0)  # the teardown; the second SIGTERM lands here
        print("torn down", flush=True)
""")


def test_a_second_sigterm_during_the_teardown_does_not_cut_it_short():
    child = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "ready"
        child.send_signal(signal.SIGTERM)
        assert child.stdout.readline().strip() == "unwinding"
        time.sleep(0.2)
        child.send_signal(signal.SIGTERM)
        out, _ = child.communicate(timeout=20)
        assert "torn down" in out
    finally:
        child.kill()
        child.wait()


CONFTEST = textwrap.dedent("""
    import pytest
    from harness import cli

    @pytest.fixture(scope="session", autouse=True)
    def sigterm_unwinds():
        cli.unwind_on_sigterm()
        yield
""")
TEST = textwrap.dedent("""
    import time
    import pytest

    @pytest.fixture(scope="module")
    def cluster(tmp_path_factory):
        yield
        open("torn-down", "w").write("yes")

    def test_runs_long(cluster):
        open("ready", "w").write("yes")
        time.sleep(30)
""")


def test_a_sigterm_to_the_test_run_tears_its_fixtures_down(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_long.py").write_text(TEST)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    child = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_long.py"],
                             cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if (tmp_path / "ready").exists() or child.poll() is not None:
                break
            time.sleep(0.1)
        assert (tmp_path / "ready").exists()
        child.send_signal(signal.SIGTERM)
        child.wait(timeout=20)
        assert (tmp_path / "torn-down").exists()
    finally:
        child.kill()
        child.wait()
