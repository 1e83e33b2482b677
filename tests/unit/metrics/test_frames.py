"""Picking rows of the tidy tables by column and by label."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.metrics import frames, summarising
from tests.unit.metrics import recorded


def _summary():
    rows = [summarising.Row("apiserver", "apiserver_request_total", "delta", recorded.labels(verb="LIST", code="200"), "a", 1.0, 3.0),
            summarising.Row("apiserver", "apiserver_request_total", "delta", recorded.labels(verb="POST", code="201"), "a", 1.0, 20.0),
            summarising.Row("apiserver", "apiserver_request_total", "delta", recorded.labels(verb="POST", code="409"), "b", 2.0, 1.0)]
    return frames.summary_frame(rows)


@pytest.mark.parametrize("match, expected", [
    ({}, 24.0),
    ({"phase": "a"}, 23.0),
    ({"verb": "POST"}, 21.0),
    ({"verb": "POST", "phase": "a"}, 20.0),
    ({"verb": "GET"}, 0.0),
])
def test_total(match, expected):
    assert frames.total(_summary(), **match) == expected


def test_labels_are_sorted_json_and_expand_to_columns():
    frame = _summary()
    assert frame["labels"].iloc[0] == '{"code":"200","verb":"LIST"}'
    wide = frames.expand_labels(frame)
    assert list(wide["verb"]) == ["LIST", "POST", "POST"]
    assert list(frame.columns) == list(frames.SUMMARY_COLUMNS)


def test_empty_frames_keep_their_columns():
    assert list(frames.observations_frame([], []).columns) == list(frames.OBSERVATION_COLUMNS)
    assert isinstance(frames.census_frame(None), pd.DataFrame) and "resource" in frames.census_frame(None).columns
