"""SIGTERM unwinds `kqbench` like Ctrl-C so clusters are torn down; a second SIGTERM arriving during that
teardown (`timeout` forwarding one while `pkill` matches the process too) must not cut it short."""

import signal
import subprocess
import sys
import textwrap
import time

SCRIPT = textwrap.dedent("""
    import signal, sys, time
    from harness import cli
    signal.signal(signal.SIGTERM, cli._raise_interrupt)
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
