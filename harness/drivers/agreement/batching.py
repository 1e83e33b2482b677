"""A batch of cases through one implementation as a scenario run (pure): the one-case scenario that plays it,
and its outcomes read back from that run's tables.

The runner brings the batch's cluster up, starts the scheduler through its implementation's door and
tears both down, also on failure; `kqbench agree` hands `differential` a function that runs these
scenarios (the runner lists the drivers, so a driver never calls it itself).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from harness.agreeing import cases, decisions as decided
from harness.drivers.agreement import running, settings

NODES = 2
"""Nodes of a batch's cluster: the cases' Workloads have no pods on them (flavors match node labels only)."""


@dataclass
class Outcome:
    """One case's settled decisions per epoch, up to where its run stopped."""

    decisions: list[decided.Decisions] = field(default_factory=list)
    failure: str | None = None


def by_setting(batch: Mapping[str, cases.Case]) -> list[dict[str, cases.Case]]:
    """``batch`` split into the parts that can share a scheduler (``settings.setting_of``), in order of first case."""
    parts: dict[settings.SchedulerSetting, dict[str, cases.Case]] = {}
    for prefix, case in batch.items():
        parts.setdefault(settings.setting_of(case), {})[prefix] = case
    return list(parts.values())


def scenario(batch: Mapping[str, cases.Case], implementation: str, kueue: settings.KueueOptions, name: str) -> dict:
    """The scenario (as YAML data) whose one case plays ``batch`` (prefix -> case, one scheduler setting) on
    a fresh cluster of ``implementation``."""
    first = next(iter(batch.values()))
    return {"name": name, "description": f"kqbench agree: {len(batch)} case(s) side by side on {implementation}",
            "cluster": {"backend": "kwok", "nodes": NODES},
            "queues": {"flavors": []},  # every object comes from the cases, prefixed
            "scheduler": settings.section_fields(first, implementation, kueue),
            "phases": {"agreement": {"cases": {prefix: case.model_dump(mode="json", exclude_defaults=True)
                                               for prefix, case in batch.items()}}}}


def outcomes(batch: Mapping[str, cases.Case], tables: Mapping[str, pd.DataFrame], error: str) -> dict[str, Outcome]:
    """Each case's decisions, epoch by epoch, from the run's tables; a run that stopped (``error``, its one
    line; the failure table's row says more) fails every case of the batch, the epochs before kept."""
    found = {prefix: Outcome() for prefix in batch}
    rows = tables.get(running.DECISIONS)
    if rows is not None and not rows.empty:
        for row in rows.sort_values("epoch").itertuples(index=False):
            if row.prefix in found:
                found[row.prefix].decisions.append(decided.from_json(json.loads(row.decisions)))
    failures = tables.get(running.FAILURES)
    failure = failures["failure"].iloc[-1] if failures is not None and not failures.empty else None
    if failure or error:
        for outcome in found.values():
            outcome.failure = failure or error
    return found
