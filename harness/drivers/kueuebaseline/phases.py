"""The kueue-baseline driver's phase: Kueue's fixed-count run, bounded in time."""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveFloat

from harness.scenarios import base


class KueueBaselinePhase(base.Model):
    """Create every Workload of `load.mix` (each entry's `count` and `per_second` per ClusterQueue) on
    schedule, finish each `runtime_seconds` after its admission; ends when all finished or at `seconds`."""

    kind: Literal["kueue-baseline"] = "kueue-baseline"
    seconds: PositiveFloat = 900
    """Bound on the whole generation; an unfinished run is reported as incomplete."""
    kueue_config: Literal["baseline", "large-scale", "tas"] = "baseline"
    """Which configuration of Kueue's scheduler performance test the scenario ports: its rangespec
    (read from the Kueue module it comes from, kueuebaseline.rangespecs) judges the run, and only
    `baseline` has published figures beside it."""
    rangespec: bool = True
    """Judge the run by that rangespec; false for a shape scaled away from Kueue's (fewer ClusterQueues,
    other counts), whose wall times and usage its bounds do not describe."""
    declare_runtime: bool = True
    """Write each Workload's declared runtime (`kqbench.io/runtime-seconds`, its class's `runtime_seconds`
    times `declared_runtime_factor`); false leaves it off, so estimators that need one say so or learn it."""
    runtime_seed: int = 1
    """Seed of the drawn runtimes (`runtime_distribution: lognormal`): one seed, one run's runtimes."""
    estimates_every_seconds: PositiveFloat | None = None
    """Read every ClusterQueue's pendingworkloads (all pages, through kube-apiserver) this often while the
    phase runs and keep the expected admission times they carry (table kueue_estimates), scored against
    the real admissions at the end; None reads none."""


PHASES = (KueueBaselinePhase,)
