"""`kqbench ARGS` in this process, as a unit test calls the CLI: its exit code and what it printed."""

from __future__ import annotations

import sys

from harness import cli


def kqbench(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `kqbench ARGS`."""
    monkeypatch.setattr(sys, "argv", ["kqbench", *args])
    try:
        cli.main()
        code = 0
    except SystemExit as done:
        code = done.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err
