"""A Locust phase's run plan: the phase's users, duration and pending target (harness.load plans the run)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.drivers.locust import phases as locustphases
from harness.load import planning

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.scenarios import sections
    from loadtests import settings as ls

DEFAULT_FILL_TARGET = 50
"""Pending Workloads churn keeps when the scenario has no fill phase."""


def load_plan(cluster: state.ClusterInfo, scenario: sections.ScenarioFields, phase) -> ls.RunPlan | None:
    """The Locust run plan of one phase; None when the phase drives no load."""
    planning.refuse_fixed_counts(scenario)
    users = dict(scenario.load.users)
    if isinstance(phase, locustphases.FillPhase):
        if phase.bulk:
            return None  # no Locust: harness.drivers.locust.backlogfill writes it
        users = {"churn": max(1, users["churn"])}
        run_time = min(phase.timeout_seconds, phase.pending / scenario.load.rates.create_per_second + 10.0)
        return planning.plan(cluster, scenario, users, run_time, phase.pending)
    if isinstance(phase, locustphases.ChurnPhase):
        return planning.plan(cluster, scenario, users, phase.seconds, fill_target(scenario))
    if isinstance(phase, locustphases.QueryPhase):
        users = {"querier": max(1, users["querier"]), "bystander": users["bystander"]}
        return planning.plan(cluster, scenario, users, phase.seconds, fill_target(scenario), phase.limit,
                             phase.max_offset)
    return None  # drain drives no load (see DrainPhase)


def fill_target(scenario: sections.ScenarioFields) -> int:
    """What churn keeps pending of its own: the scenario's last fill's pending (its churn_pending when the
    fill is a bulk backlog, which churn does not own)."""
    fills = [p for p in scenario.phases.values() if isinstance(p, locustphases.FillPhase)]
    if not fills:
        return DEFAULT_FILL_TARGET
    return fills[-1].churn_pending if fills[-1].bulk else fills[-1].pending
