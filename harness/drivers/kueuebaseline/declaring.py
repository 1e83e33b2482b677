"""How long each Workload of a kueue-baseline run really runs, and what it declares it runs (pure).

An estimator that forecasts from runtimes (docs/eta.md, `simulator`) reads the runtime a Workload declares
in the annotation `kqbench.io/runtime-seconds`; what it is worth depends on how close the declaration is
to the truth. So each class of `load.mix` says (its mix fields, `RuntimeFields`):

- `runtime_distribution`: `fixed` (every Workload runs the class's `runtime_seconds`, Kueue's generator)
  or `lognormal` (heavy-tailed, the class's `runtime_seconds` its mean, `runtime_sigma` the spread of
  its logarithm), drawn from the phase's `runtime_seed` in schedule order, so one seed is one run's
  runtimes whatever the machine;
- `declared_runtime_factor`: the declaration is the class's `runtime_seconds` times this (2.0: users
  declare twice what they run on average); with a drawn runtime the declaration is the class's mean,
  not the draw, as a user knows the kind of job and not this one's luck.

The phase's `declare_runtime: false` leaves the annotation off every Workload (the estimators' path of
"no runtime declared", or runtimes learned from finished Workloads).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import PositiveFloat

from harness.load import arrivals
from harness.scenarios import base

FIXED = "fixed"
LOGNORMAL = "lognormal"
SHORTEST_SECONDS = 0.001
"""A drawn runtime is never below this (a Workload finishes after its admission, not at it)."""


class RuntimeFields(base.Model):
    """The fields of a load.mix entry only kueue-baseline reads: real and declared runtimes."""

    declared_runtime_factor: PositiveFloat = 1.0
    """The runtime each Workload of the class declares (`kqbench.io/runtime-seconds`) is `runtime_seconds`
    times this: 1.0 declares the truth (for `fixed`), 2.0 twice it."""
    runtime_distribution: Literal["fixed", "lognormal"] = FIXED
    """`fixed`: each Workload runs `runtime_seconds`; `lognormal`: each runs a draw whose mean is
    `runtime_seconds` and whose logarithm has the standard deviation `runtime_sigma` (heavy-tailed)."""
    runtime_sigma: PositiveFloat = 1.0
    """The lognormal's sigma (of the runtime's logarithm): 1.0 puts the p99 at about 6 times the mean."""


@dataclass(frozen=True, slots=True)
class Runtime:
    """One Workload's runtime: what it runs after its admission, and what it declares (None: nothing)."""

    real_seconds: float
    declared_seconds: float | None


def draw(plan: arrivals.Plan, mixes: Sequence[RuntimeFields], declare: bool = True,
         seed: int = 1) -> dict[str, Runtime]:
    """Each Workload of the plan's schedule -> its runtime; `mixes` are the load.mix entries in the plan's
    class order (each with RuntimeFields' fields)."""
    if len(mixes) != len(plan.classes):
        raise ValueError(f"{len(mixes)} mix entries for {len(plan.classes)} classes")
    fields = {cls.name: mix for cls, mix in zip(plan.classes, mixes)}
    rng = random.Random(seed)
    out = {}
    for creation in arrivals.schedule(plan):
        cls = creation.workload_class
        mix = fields[cls.name]
        declared = cls.runtime_seconds * mix.declared_runtime_factor if declare else None
        out[creation.name] = Runtime(real_of(cls.runtime_seconds, mix, rng), declared)
    return out


def real_of(mean_seconds: float, mix: RuntimeFields, rng: random.Random) -> float:
    """One Workload's runtime: the class's own (`fixed`) or a lognormal draw of that mean."""
    if mix.runtime_distribution == FIXED:
        return mean_seconds
    sigma = mix.runtime_sigma
    # mu such that the mean exp(mu + sigma^2 / 2) is the class's runtime
    drawn = rng.lognormvariate(math.log(mean_seconds) - sigma * sigma / 2, sigma)
    return max(SHORTEST_SECONDS, round(drawn, 3))


def declared_text(seconds: float) -> str:
    """The annotation's value: seconds, to the millisecond."""
    return f"{round(seconds, 3):g}"
