"""The typed shape of a scenario: `sections` narrowed by what the registries assemble.

The phase union and the load.mix fields come from the drivers' registry, the scheduler fields from the
implementations' (each written flat in the scenario file). Everything else is in `sections`, which is
what drivers and implementations read: they cannot import this module, which imports them.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from harness.drivers import registry
from harness.implementations import names, registry as implementations
from harness.scenarios import sections

PHASE_KINDS = registry.drivers().kinds
"""Every phase kind a registered driver runs."""
Phase = registry.drivers().phase_union()
"""One phase: a registered driver's phase model, chosen by `kind`."""
Implementation = Literal[tuple(implementations.implementations())]  # type: ignore[valid-type]
"""A registered scheduler implementation's name."""


class SchedulerSection(*reversed(implementations.scheduler_fields()), sections.SchedulerFields):  # fields: last base first
    """The scheduler under test: the shared fields, then each implementation's own in registry order
    (written flat under `scheduler:`); every field but the runner's and another implementation's own is a
    setting of its process."""

    implementation: Implementation = names.REFERENCE
    """Which scheduler (harness.implementations.registry)."""

    @model_validator(mode="after")
    def _implementation_publishes_the_strategy(self) -> "SchedulerSection":
        served = implementations.get(self.implementation).strategies
        if self.strategy not in served:
            raise ValueError(f"implementation {self.implementation} publishes positions only as "
                             f"{' or '.join(served)} (got strategy {self.strategy})")
        return self


class WorkloadMixSpec(*reversed(registry.drivers().mix_fields()), sections.WorkloadMixFields):  # fields: last base first
    """One kind of Workload in load.mix: the shared fields, then the drivers' own (written flat)."""


class LoadSection(sections.LoadFields):
    mix: list[WorkloadMixSpec] = Field(default_factory=lambda: [WorkloadMixSpec()], min_length=1)


class Scenario(sections.ScenarioFields):
    """One scenario file; `sweep` is expanded by `loading.expand` into one run per point and repeat."""

    scheduler: SchedulerSection = SchedulerSection()
    phases: dict[str, Phase] = {}
    load: LoadSection = LoadSection()

    @model_validator(mode="before")
    @classmethod
    def _arm_into_cluster(cls, data: Any) -> Any:
        """`arm: x` merges arms[x] into `cluster` (gates and flags key by key), so a case's cluster is plain."""
        if not (isinstance(data, dict) and data.get("arm") is not None):
            return data
        arms = data.get("arms") or {}
        if not isinstance(arms, dict) or data["arm"] not in arms:
            raise ValueError(f"arm {data['arm']!r} is not one of arms ({', '.join(map(str, arms)) or 'none defined'})")
        arm = arms[data["arm"]] or {}
        cluster = dict(data.get("cluster") or {})
        if arm.get("k8s_version") is not None:
            cluster["k8s_version"] = arm["k8s_version"]
        for key in ("feature_gates", "apiserver_args", "controller_manager_args", "scheduler_args"):
            if arm.get(key):
                cluster[key] = {**(cluster.get(key) or {}), **arm[key]}
        return {**data, "cluster": cluster}

    @model_validator(mode="before")
    @classmethod
    def _a_jobs_cluster_has_its_jobs_managed(cls, data: Any) -> Any:
        """In a cluster that runs Jobs the scheduler manages them unless the scenario says otherwise."""
        if isinstance(data, dict) and isinstance(data.get("cluster"), dict) and data["cluster"].get("jobs"):
            scheduler = data.get("scheduler")
            if scheduler is None or isinstance(scheduler, dict):
                data = {**data, "scheduler": {"manage_jobs": True, **(scheduler or {})}}
        return data

    @model_validator(mode="after")
    def _phases_fit_the_scenario(self) -> "Scenario":
        """A phase model may state what it needs of the rest of the scenario (`check_scenario`)."""
        for name, phase in self.phases.items():
            check = getattr(phase, "check_scenario", None)
            problem = check(self) if check else None
            if problem:
                raise ValueError(f"phase {name}: {problem}")
        return self

    @model_validator(mode="after")
    def _faults_name_phases(self) -> "Scenario":
        for fault in self.faults:
            if fault.phase not in self.phases:
                raise ValueError(f"fault {fault.kind} names phase {fault.phase!r}, which is not one of phases "
                                 f"({', '.join(self.phases) or 'none'})")
        return self

    @model_validator(mode="before")
    @classmethod
    def _phase_kind_from_key(cls, data: Any) -> Any:
        """`phases: {fill: {pending: 10}}` means kind fill; other keys must say `kind:`."""
        if isinstance(data, dict) and isinstance(data.get("phases"), dict):
            phases = {}
            for key, body in data["phases"].items():
                body = {} if body is None else body
                if isinstance(body, dict) and "kind" not in body and key in PHASE_KINDS:
                    body = {"kind": key, **body}
                phases[key] = body
            data = {**data, "phases": phases}
        return data

    @model_validator(mode="after")
    def _sweep_axes(self) -> "Scenario":
        for axis, values in self.sweep.items():
            if not values:
                raise ValueError(f"sweep axis {axis!r} has no values")
        return self
