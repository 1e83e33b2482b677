"""The terminal summary: the same pivot, every name whole at any width, each process named."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from harness.drivers import registry
from harness.reporting import printing, rendering, verdicts
from tests.unit.reporting import builders

LONG = [builders.Design("aggregated-snapshot"), builders.Design("aggregated-indexed", query_p99_ms=12),
        builders.Design("status-field", extra_params={"scheduler.no_client_limit": True}),
        builders.Design("cq-status-topn", query_p99_ms=80)]


@pytest.mark.parametrize("width", [60, 100, 200])
def test_names_are_never_truncated(tmp_path, width):
    pivot = rendering.pivot_of([builders.RunBuilder(designs=LONG).write(tmp_path)], registry.drivers())
    out = io.StringIO()
    printing.show(Console(width=width, file=out, force_terminal=True), pivot, verdicts.questions(registry.drivers()))
    lines = Text.from_ansi(out.getvalue()).plain.splitlines()
    assert "…" not in "\n".join(lines)
    # every table shows its metric and unit columns whole (a squeezed column would be empty)
    assert all("│ /s " in line or "│ ms " in line or "│ MiB " in line or "│ KiB " in line or "│ count " in line
               or "│ ratio " in line for line in lines if line.startswith("│ load.") or line.startswith("│ apiserver."))
    for name in [c.label for c in pivot.columns] + [r.metric for r in pivot.rows]:
        assert any(name in line for line in lines), name  # whole, on one line
    # every per-process row says which process
    rss = [line for line in lines if "rss_max_bytes" in line]
    assert rss and all("rss_max_bytes[" in line and "]" in line for line in rss)
    assert {"kube-apiserver", "etcd", "scheduler", "kube-controller-manager"} <= {
        line.split("rss_max_bytes[", 1)[1].split("]", 1)[0] for line in rss}


def test_a_narrow_terminal_gets_several_tables_each_with_metric_and_unit(tmp_path):
    pivot = rendering.pivot_of([builders.RunBuilder(designs=LONG).write(tmp_path)], registry.drivers())
    narrow = printing.tables(pivot, 90)
    assert len(narrow) > 1 and len(printing.tables(pivot, 400)) == 1
    assert all([c.header for c in t.columns][:2] == ["metric", "unit"] for t in narrow)
    assert sum(len(t.columns) - 2 for t in narrow) == len(pivot.columns)


def test_a_log_gets_the_whole_table_in_one_piece(tmp_path):
    pivot = rendering.pivot_of([builders.RunBuilder(designs=LONG).write(tmp_path)], registry.drivers())
    out = io.StringIO()
    printing.show(Console(file=out, width=80), pivot, verdicts.questions(registry.drivers()))  # not a terminal: CI logs do not wrap
    text = out.getvalue()
    header = next(line for line in text.splitlines() if "metric" in line and "unit" in line)
    assert text.count("side by side") == 1 and all(c.label in header for c in pivot.columns)
