"""Ours / Kueue's, from one run that ran the same phase with both implementations (pure).

A sweep over `scheduler.implementation` puts a reference case and a Kueue case of the same phase in
one run's tables; a driver's figures table says which implementation made each row. Kueue's
counterpart of a reference case is the case whose id differs only in `implementation=kueue` (other
sweep axes, such as an arm, and the repeat stay the same); without such a case, the one Kueue case
that ran the phase, or with several the one of the same repeat (ours swept on an axis Kueue was not:
a pace, a setting); else none is picked: no guess.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from harness.implementations import names


def kueue_case(kueue_cases: Iterable[str], case: str) -> str | None:
    """The Kueue case a reference `case` is set beside, of the Kueue cases that ran its phase (None: none or a guess)."""
    cases = sorted(set(kueue_cases))
    twin = case.replace(f"implementation={names.REFERENCE}", f"implementation={names.KUEUE}")
    if twin != case and twin in cases:
        return twin
    if len(cases) > 1:
        # ours swept on axes Kueue was not (a pace, a setting): the one Kueue case whose every other axis and
        # repeat are ours too
        ours = set(twin.split(","))
        cases = [c for c in cases if set(c.split(",")) <= ours]
    return cases[0] if len(cases) == 1 else None


def ratios_to_kueue(frame: pd.DataFrame, case: str, metrics: Iterable[str], value: str = "value") -> dict[str, float]:
    """metric -> ours / Kueue's for a reference `case` (rows: metric, `value`, case, phase, implementation)."""
    if "implementation" not in frame.columns:
        return {}
    mine = frame[(frame["case"] == case) & (frame["implementation"] == names.REFERENCE)]
    theirs = frame[(frame["implementation"] == names.KUEUE) & frame["phase"].isin(set(mine["phase"]))]
    twin = kueue_case(theirs["case"], case)
    if mine.empty or twin is None:
        return {}
    theirs = theirs[theirs["case"] == twin]
    ours_by, theirs_by = (f.drop_duplicates("metric").set_index("metric")[value] for f in (mine, theirs))
    out = {}
    for metric in metrics:
        a, b = ours_by.get(metric), theirs_by.get(metric)
        if a is not None and b is not None and pd.notna(a) and pd.notna(b) and b:
            out[metric] = float(a) / float(b)
    return out
