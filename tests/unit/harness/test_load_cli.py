"""`kqbench load` input parsing: run-time spellings, and bad input refused before any process starts."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from harness.cli import load


@pytest.mark.parametrize("text, seconds", [
    ("90", 90.0), ("90s", 90.0), ("2.5s", 2.5), ("2m", 120.0), ("1h30m", 5400.0), ("1m30s", 90.0),
])
def test_run_time_spellings(text, seconds):
    assert load.parse_span(text) == seconds


@pytest.mark.parametrize("text", ["", "banana", "5x", "m5", "-3s"])
def test_bad_run_times_are_refused(text):
    with pytest.raises(click.BadParameter, match="time span"):
        load.parse_span(text)


@pytest.mark.parametrize("args, message", [
    (["--name", "a", "--kubeconfig", "k"], "either --name or --kubeconfig"),
    (["--run-time", "soon"], "time span"),
    (["--query-mode", "psychic"], "psychic"),
    (["--worker"], "--worker needs --master-host"),
    (["--worker", "--master", "--master-host", "h"], "either --worker or --master"),
    (["--master-host", "h"], "--master-host is for --worker"),
    (["--worker", "--master-host", "h", "--kubeconfig", "k"], "a worker takes the apiserver"),
    (["--expect-workers", "2"], "are for --master"),
    (["--master-bind", "0.0.0.0:5557"], "are for --master"),
    (["--master", "--expect-workers", "0"], "must be >= 1"),
    (["--master", "--master-bind", "5557"], "HOST:PORT"),
    (["--master", "--master-bind", "0.0.0.0:6000", "--master-port", "6001"], "contradicts"),
])
def test_bad_input_fails_before_loading(args, message, tmp_path):
    (tmp_path / "k").write_text("")
    result = CliRunner().invoke(load.command, args, catch_exceptions=False, env={"KQBENCH_STATE": str(tmp_path)})
    assert result.exit_code == 2
    assert message in result.output
