"""What `kqbench capacity` asks of the capacity search: its phase in a scenario, the command's options
as scenario overrides, a duration estimate, and the capacity table of a finished run (pure but for
the table written next to the run)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from harness.drivers.capacity import phases as capacityphases, searching, stepping, tabulating
from harness.errors import KqbenchError

if TYPE_CHECKING:
    from harness.scenarios import sections


def capacity_phase(scenario: sections.ScenarioFields) -> tuple[str, capacityphases.CapacityPhase]:
    found = [(name, phase) for name, phase in scenario.phases.items() if isinstance(phase, capacityphases.CapacityPhase)]
    if len(found) != 1:
        raise KqbenchError(f"scenario {scenario.name!r} has {len(found)} capacity phases: give it exactly one "
                           "(`phases: {capacity: {from: 1000, to: 32000}}`)")
    return found[0]


def overrides_for(scenario: sections.ScenarioFields, vary: str | None, start: int | None, stop: int | None,
                  strategies: tuple[str, ...], bulk: bool | None = None) -> list[str]:
    """--set items that carry the command's options into the scenario (so run.json records them)."""
    name, _ = capacity_phase(scenario)
    items = []
    if bulk is not None:
        items.append(f"phases.{name}.bulk={str(bulk).lower()}")
    for key, value in (("vary", vary), ("from", start), ("to", stop)):
        if value is not None:
            items.append(f"phases.{name}.{key}={value}")
    if strategies:
        section = scenario.scheduler
        items.append("sweep.scheduler=" + json.dumps(tabulating.variants(strategies, section.qps, section.burst)))
    return items


def estimate(scenarios: Iterable[sections.ScenarioFields]) -> tuple[float, float]:
    """(seconds if every design holds to `to`, seconds if every design breaks at its last geometric step), over
    the cases' scenarios."""
    low = high = 0.0
    for scenario in scenarios:
        _, phase = capacity_phase(scenario)
        settings = stepping.StepSettings("capacity", phase.hold_seconds, phase.fill_timeout_seconds,
                                         scenario.load.rates.create_per_second, "", phase.thresholds,
                                         churn_pending=phase.churn_pending if phase.bulk else None)
        plan = phase.plan()
        geometric = plan.geometric_loads()
        bisections = searching.steps_needed(plan) - len(geometric)
        middle = (geometric[-2] + geometric[-1]) // 2 if len(geometric) > 1 else geometric[-1]
        low += stepping.estimate_seconds(settings, geometric)
        high += stepping.estimate_seconds(settings, [*geometric, *[middle] * max(0, bisections)])
    return low, high


def write_capacity(tables: Mapping[str, pd.DataFrame], stopped: Iterable[str], folder: Path) -> pd.DataFrame:
    """The capacity table of a run (designs of `stopped` cases concluded as interrupted), written as
    capacity.csv into the run's folder."""
    capacity = tabulating.capacity(tables)
    stopped = set(stopped)
    if stopped and not capacity.empty:
        steps = tables[tabulating.STEPS]
        designs = set(steps.loc[steps["case"].isin(stopped), "design"])
        capacity.loc[capacity["design"].isin(designs), "conclusion"] = searching.INTERRUPTED
    capacity.to_csv(folder / tabulating.CAPACITY_CSV, index=False)
    return capacity
