"""Which Kueue case a reference case's ratios divide by."""

from __future__ import annotations

import pandas as pd
import pytest

from harness.drivers import peers


def _frame(cases: dict[str, float]) -> pd.DataFrame:
    return pd.DataFrame([{"case": case, "metric": "wall_seconds", "value": value, "phase": "churn",
                          "implementation": "kueue" if "implementation=kueue" in case else "reference"}
                         for case, value in cases.items()])


def test_the_twin_with_the_same_other_axes_and_round_first():
    frame = _frame({"implementation=reference,arm=a,r0": 10, "implementation=kueue,arm=a,r0": 20,
                    "implementation=kueue,arm=b,r0": 40})
    assert peers.ratios_to_kueue(frame, "implementation=reference,arm=a,r0", ["wall_seconds"]) == {"wall_seconds": 0.5}


def test_ours_swept_on_an_axis_kueue_was_not_divides_by_kueue_of_the_same_round():
    frame = _frame({"implementation=reference,min_cycle_seconds=0.09,r0": 10, "implementation=kueue,r0": 20,
                    "implementation=reference,min_cycle_seconds=0.09,r1": 30, "implementation=kueue,r1": 60})
    for case in ("implementation=reference,min_cycle_seconds=0.09,r0", "implementation=reference,min_cycle_seconds=0.09,r1"):
        assert peers.ratios_to_kueue(frame, case, ["wall_seconds"]) == {"wall_seconds": pytest.approx(0.5)}


def test_no_guess_between_several_kueue_cases_of_one_round():
    frame = _frame({"implementation=reference,x=1,r0": 10, "implementation=kueue,y=1,r0": 20,
                    "implementation=kueue,y=2,r0": 40})
    assert peers.ratios_to_kueue(frame, "implementation=reference,x=1,r0", ["wall_seconds"]) == {}
