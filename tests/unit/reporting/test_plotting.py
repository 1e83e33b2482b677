"""Figures: curves only when pending varied, one panel per design for time series, one colour per design."""

from __future__ import annotations

import pandas as pd

from harness.reporting import palettes, plotting
from tests.unit.reporting import builders


def test_one_pending_value_is_not_drawn_as_a_curve():
    one = pd.DataFrame({"column": ["a", "b"], "pending": [2000, 2000], "value": [1.0, 2.0]})
    swept = pd.DataFrame({"column": ["a", "a", "b"], "pending": [1000, 4000, 1000], "value": [1.0, 2.0, 3.0]})
    assert not plotting.varies_pending(one) and plotting.varies_pending(swept)


def test_a_strategy_keeps_its_colour_whatever_the_column_order():
    first = palettes.colours([("status-field", "status-field"), ("aggregated-indexed", "aggregated-indexed")])
    second = palettes.colours([("aggregated-indexed", "aggregated-indexed"), ("status-field", "status-field"),
                               ("status-field, qps=50", "status-field")])
    assert first["status-field"] == second["status-field"] and first["aggregated-indexed"] == second["aggregated-indexed"]
    assert second["status-field, qps=50"] not in set(palettes.STRATEGY_COLOURS.values())


def test_phase_spans_come_from_the_measurements(tmp_path):
    from harness.results import tables

    builders.RunBuilder().write(tmp_path)
    spans = plotting.phase_spans(tables.read(tmp_path))
    one = spans[spans["case"] == "strategy=status-field,r0"]
    assert list(one["phase"]) == ["fill", "churn", "query"] and (one["end"] > one["start"]).all()
