"""CRDs are installed so that a run never measures kube-apiserver's 2 s create hold after Established."""

from __future__ import annotations

import datetime as dt

import pytest

from harness.kube import apiservice


def test_wait_lasts_until_two_seconds_after_the_latest_established():
    at = dt.datetime(2026, 11, 30, 14, 57, 34, tzinfo=dt.timezone.utc).timestamp()
    times = ["2026-11-30T14:57:34Z", "2026-11-30T14:57:33Z"]
    assert apiservice.hold_remaining(times, at + 0.5) == pytest.approx(1.6)
    assert apiservice.hold_remaining(times, at + 2.2) == 0.0


def test_no_transition_time_means_no_wait():
    assert apiservice.hold_remaining(["", ""], 0.0) == 0.0
    assert apiservice.hold_remaining([], 0.0) == 0.0
