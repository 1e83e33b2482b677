"""What a scenario needs built, from its cases alone: a local KWOK cluster's control plane at each case's
Kubernetes version, and what each case's scheduler implementation starts (a Kueue version only where a case
names Kueue). `kqbench toolchain build --for` and `kqbench run` build exactly this."""

from __future__ import annotations

from harness.implementations import registry as implementations
from harness.scenarios import loading
from harness.toolchain import components


def of(loaded: loading.Loaded) -> tuple[components.Component, ...]:
    wanted: list[components.Component] = []
    for case in loaded.cases:
        cluster, scheduler = case.scenario.cluster, case.scenario.scheduler
        if cluster.backend == "kwok":  # kind runs images, `existing` is someone's cluster: nothing to build
            wanted.extend(components.control_plane(cluster.k8s_version))
        wanted.extend(implementations.get(scheduler.implementation).needs(scheduler))
    return components.unique(wanted)
