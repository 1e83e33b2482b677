"""Ours / Kueue's, from one run that ran the same phase with both implementations (pure).

A sweep over `scheduler.implementation` puts a reference case and a Kueue case of the same phase in
one run's tables; a driver's figures table says which implementation made each row. Kueue's
counterpart of a reference case is the case whose id differs only in `implementation=kueue` (other
sweep axes, such as an arm, and the repeat stay the same); without such a case, the one Kueue case
that ran the phase (with several, none is picked: no guess).
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd


def ratios_to_kueue(frame: pd.DataFrame, case: str, metrics: Iterable[str], value: str = "value") -> dict[str, float]:
    """metric -> ours / Kueue's for a reference `case` (rows: metric, `value`, case, phase, implementation)."""
    if "implementation" not in frame.columns:
        return {}
    mine = frame[(frame["case"] == case) & (frame["implementation"] == "reference")]
    theirs = frame[(frame["implementation"] == "kueue") & frame["phase"].isin(set(mine["phase"]))]
    twin = case.replace("implementation=reference", "implementation=kueue")
    if twin != case and (theirs["case"] == twin).any():
        theirs = theirs[theirs["case"] == twin]
    if mine.empty or theirs["case"].nunique() != 1:
        return {}
    ours_by, theirs_by = (f.drop_duplicates("metric").set_index("metric")[value] for f in (mine, theirs))
    out = {}
    for metric in metrics:
        a, b = ours_by.get(metric), theirs_by.get(metric)
        if a is not None and b is not None and pd.notna(a) and pd.notna(b) and b:
            out[metric] = float(a) / float(b)
    return out
