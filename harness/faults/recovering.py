"""One fault's record and the recovery clock (pure: the clock and sleep are injected).

Recovery is timed from the moment the component is back (restarted, continued) until each probe
first succeeds: kube-apiserver ready, the scheduler admitting again, positions served again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field

import pandas as pd

TABLE = "faults"


@dataclass(slots=True)
class FaultRecord:
    phase: str
    kind: str
    at_seconds: float
    """Planned time into the phase."""
    injected_at: float | None = None
    """Wall-clock (unix seconds) when the fault was injected; None: the phase ended first."""
    back_at: float | None = None
    """Wall-clock when the component was back (restarted or continued)."""
    injected_in_phase: float | None = None
    """Seconds from the phase's start to the injection (the load tables' `t` counts from about there)."""
    recovery: dict[str, float | None] = field(default_factory=dict)
    """Probe -> seconds from `back_at` to its first success (None: not within the timeout)."""
    error: str = ""

    @property
    def recovered(self) -> bool:
        return self.injected_at is not None and not self.error and all(v is not None for v in self.recovery.values())

    def row(self) -> dict:
        row = {k: v for k, v in asdict(self).items() if k != "recovery"}
        row["down_seconds"] = None if self.injected_at is None or self.back_at is None else self.back_at - self.injected_at
        for probe, seconds in self.recovery.items():
            row[f"{probe}_seconds"] = seconds
        finished = [v for v in self.recovery.values() if v is not None]
        row["recovery_seconds"] = max(finished) if finished and self.recovered else None
        row["recovered"] = self.recovered
        return row


def frame(records: list[FaultRecord]) -> pd.DataFrame:
    return pd.DataFrame([r.row() for r in records])


def time_to_recover(probes: Mapping[str, Callable[[], bool]], timeout: float, clock: Callable[[], float],
                    sleep: Callable[[float], None], give_up: Callable[[], bool] = lambda: False,
                    interval: float = 0.5) -> dict[str, float | None]:
    """Seconds until each probe first answers True (a probe that raises counts as not yet); bounded by
    `timeout` and by `give_up` (the phase ended)."""
    started = clock()
    found: dict[str, float | None] = {name: None for name in probes}
    while True:
        for name, probe in probes.items():
            if found[name] is None:
                try:
                    ok = probe()
                except Exception:  # noqa: BLE001 - a component coming back answers with errors meanwhile
                    ok = False
                if ok:
                    found[name] = clock() - started
        if all(v is not None for v in found.values()) or clock() - started >= timeout or give_up():
            return found
        sleep(interval)


def window_of(row: Mapping) -> tuple[float, float] | None:
    """(from, to) seconds into the phase that a fault disturbed: injection until the slowest probe
    answered (or the recovery gave up); None when it was not injected."""
    start = row.get("injected_in_phase")
    if start is None or start != start:
        return None
    down = row.get("down_seconds") or 0.0
    answered = [v for k, v in row.items() if k.endswith("_seconds") and k not in ("down_seconds", "recovery_seconds",
                "at_seconds") and v is not None and v == v]
    return start, start + down + (max(answered) if answered else 0.0)


def window_load(load_history: pd.DataFrame, phase: str, window: tuple[float, float], interval: float = 5.0) -> dict:
    """Requests, failures and the worst p99 of the phase's load rows inside the window (rows are
    `interval`-second buckets ending at `t`, so a bucket overlapping the window counts)."""
    rows = load_history[(load_history["phase"] == phase) & (load_history["t"] >= window[0])
                        & (load_history["t"] - interval <= window[1])]
    return {"requests": int(rows["requests"].sum()), "failures": int(rows["failures"].sum()),
            "p99_ms": float(rows["p99_ms"].max()) if not rows.empty else float("nan")}
