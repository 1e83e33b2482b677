"""What a replay of Kueue's cycles needs from a kueue-baseline scenario (pure): the queue
objects the run created, and every Workload as the generator creates it."""

from __future__ import annotations

from harness.agreeing import replaying
from harness.drivers.kueuebaseline import generating
from harness.load import arrivals
from harness.running import queueobjects
from harness.scenarios import sections


def shape(scenario: sections.ScenarioFields, created: dict[str, float]) -> replaying.Shape:
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

    return replaying.Shape([obj for _, obj in queueobjects.manifests(scenario.queues)], workload, ordering_of)
