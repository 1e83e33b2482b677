"""The jobs driver's phase: batch Jobs through the queue, run by the cluster's own controllers."""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveFloat, PositiveInt

from harness.implementations import names
from harness.scenarios import base, sections


class JobsPhase(base.Model):
    """Create every Job of `load.mix` (each entry's `count` Jobs of `pods` pods per ClusterQueue at
    `per_second`, each pod running `runtime_seconds` on a KWOK node) suspended in its LocalQueue; the
    scheduler under test admits them, the job controller makes the pods, kube-scheduler binds them,
    kwok runs them. Ends when every Job completed, or at `seconds`."""

    kind: Literal["jobs"] = "jobs"
    seconds: PositiveFloat = 900
    """Bound on the whole generation; an unfinished run is reported as incomplete."""
    in_flight: PositiveInt = 32
    """Job creations in flight at once."""
    local_queues: tuple[str, ...] = ()
    """The LocalQueues (names in queues.local_queues) the Jobs go to; empty: every one. Leaves the others to
    a backlog of their own (a fill phase's `local_queues`)."""

    def check_scenario(self, scenario: sections.ScenarioFields) -> str | None:
        if not scenario.cluster.jobs:
            return "kind jobs needs a cluster that runs Jobs: set cluster.jobs: true"
        if scenario.scheduler.implementation == names.REFERENCE and not scenario.scheduler.manage_jobs:
            return "kind jobs needs the reference scheduler to queue Jobs: drop scheduler.manage_jobs: false"
        for index, mix in enumerate(scenario.load.mix):
            if mix.count is None or mix.per_second is None:
                return f"load.mix[{index}] needs count and per_second (Jobs per ClusterQueue, and how fast)"
        return sections.unknown_local_queues(scenario, self.local_queues)


PHASES = (JobsPhase,)
