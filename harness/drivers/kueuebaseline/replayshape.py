"""What a replay of Kueue's cycles needs from a kueue-baseline scenario (pure): the queue
objects the run created, every Workload as the generator creates it, and the core's settings that
decide as that run's Kueue (fair sharing and its strategies, the version's defaults)."""

from __future__ import annotations

from harness.agreeing import replaying
from harness.drivers.kueuebaseline import generating
from harness.load import arrivals
from harness.scenarios import queueobjects, sections
from scheduler.core import kinds


def core_settings(scheduler: sections.SchedulerFields, version_settings: dict[str, bool]) -> dict:
    """The core's settings for the run's scheduler section: its fair sharing, and the settings that decide as
    its Kueue version (``versions.reference_settings``), which the section may override."""
    fair = kinds.FairSharing(scheduler.fair_sharing, tuple(kinds.FairSharingStrategy(s)
                                                           for s in scheduler.fair_sharing_strategies.split(",")))
    chosen = {name: value if getattr(scheduler, name, None) is None else getattr(scheduler, name)
              for name, value in version_settings.items()}
    return {"fair_sharing": fair, **chosen}


def shape(scenario: sections.ScenarioFields, created: dict[str, float], settings: dict | None = None) -> replaying.Shape:
    plan = arrivals.from_scenario(scenario)
    creations = {c.name: c for c in arrivals.schedule(plan)}
    bodies: dict[str, dict] = {}

    def workload(name: str) -> dict | None:
        creation = creations.get(name)
        if creation is None:
            return None
        if name not in bodies:
            body = generating.workload_body(creation)
            body["spec"]["priority"] = creation.workload_class.priority  # Kueue's webhook fills it in from the class
            bodies[name] = body
        return bodies[name]

    def ordering_of(name: str) -> tuple:
        return -creations[name].workload_class.priority, int(created.get(name, 0.0))

    return replaying.Shape([obj for _, obj in queueobjects.manifests(scenario.queues)], workload, ordering_of,
                           settings or {})
