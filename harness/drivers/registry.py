"""The phase drivers, keyed by phase kind: what the runner, the summaries and the report ask.

A driver is one experiment in a folder of its own (`harness/drivers/<name>/`). It owns:
- `phases`: its phase models (pydantic, each with a `kind: Literal[...]` field); the scenario's
  discriminated `Phase` union is built from every driver's models, so a scenario names a driver by
  writing one of its kinds;
- `run(context)`: drives one phase (see PhaseContext);
- `tables`: the names of the tables it writes (constants exported by its package);
- `metrics(tables, case)`: its summary.json entries of one case, read from the run's tables;
- `report(tables, context)`: optionally its section of report.html;
- `ratio_metrics`: prefixes of its metrics whose strategy ratios within one run the summary reports
  (ratios cancel the machine's speed: gates on them are far less noisy).

PhaseContext, what a run function gets (one object, so that adding a field breaks no driver):
- `cluster` (ClusterInfo: kubeconfig, ports, binary versions), `scenario` (the case's validated
  Scenario), `phase_name` (the key in `phases:`), `phase` (its typed model), `out_dir` (a folder of
  the phase's own for raw files);
- `scheduler`: the running scheduler (`pid()`, `metrics_url()`, `metrics_endpoint()`, `alive()`), None when the scenario runs none;
- `mark_phase(name)`: starts a measured sub-phase (e.g. `capacity/step-3`); the measurements split
  their per-phase numbers at every mark, and the driver's tables should say the same name;
- `watch_process(component, pid)`: the measurements sample this process from now on (a driver that
  restarts the scheduler names the new one, so its RSS and CPU stay in the run's tables);
- `say(line)`: one progress line on the terminal;
- `emit(table, frame)`: hands a table to the runner as soon as it exists (without the `case` column,
  the runner adds it). The runner keeps emitted tables also when the case fails or is interrupted, so
  a driver that emits after every step loses at most the step that was running.

Adding a driver: a new folder whose package exports `DRIVER`, and one line in `_DRIVER_PACKAGES` below.
Driver packages import `harness.scenarios.models` for annotations only (under TYPE_CHECKING):
models builds its Phase union from this registry, so a runtime import would be circular.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, Protocol, Union

import pandas as pd
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.implementations import registry as implementations
    from harness.scenarios import models

Tables = Mapping[str, pd.DataFrame]


class Metric(NamedTuple):
    """One summary.json number of one case; `better` is `lower` or `higher`."""

    name: str
    value: float
    unit: str
    better: str
    histograms: tuple[Mapping[float, int], ...] = ()
    """For a latency quantile (`..._pNN_ms`): the response-time histograms (ms -> requests) of the
    request groups it is the worst quantile of; the summary bootstraps its interval from them."""
    resolution: Callable[[float], float] | None = None
    """The step of the data behind the value at a value (same unit): the smallest change they can show
    there (1 ms for Locust's figures below 100 ms, about 0.1% for HDR histograms); no interval is narrower."""


@dataclass(frozen=True, slots=True)
class ReportContext:
    out_dir: Path
    """The folder of report.html: a section may write its own small files next to it."""
    cpus: int | str = "?"
    """CPUs of the machine that ran the first run (for notes that compare with published numbers)."""


@dataclass(frozen=True, slots=True)
class ReportSection:
    html: str
    """A pre-rendered, escaped HTML block placed after the key numbers."""
    figures: tuple[tuple[str, bytes], ...] = ()
    """(title, PNG) shown among the report's figures."""


@dataclass(frozen=True, slots=True)
class PhaseContext:
    """Everything a driver's run function may use (see the module docstring)."""

    cluster: state.ClusterInfo
    scenario: models.Scenario
    phase_name: str
    phase: Any
    """The phase's model: one of the driver's own `phases`."""
    out_dir: Path
    scheduler: implementations.SchedulerHandle | None = None
    mark_phase: Callable[[str], None] = lambda name: None
    watch_process: Callable[[str, int], None] = lambda component, pid: None
    say: Callable[[str], None] = print
    emit: Callable[[str, pd.DataFrame], None] = lambda table, frame: None


class Driver(Protocol):
    """One experiment: its phase kinds, how it runs a phase, its tables, metrics and report section."""

    @property
    def name(self) -> str: ...

    @property
    def phases(self) -> tuple[type[BaseModel], ...]: ...

    @property
    def tables(self) -> tuple[str, ...]: ...

    @property
    def ratio_metrics(self) -> tuple[str, ...]: ...

    def run(self, context: PhaseContext) -> None:
        """Drive one phase, emitting tables as they exist; raise KqbenchError (one line) on failure."""

    def metrics(self, tables: Tables, case: str) -> list[Metric]:
        """Summary entries of one case (tables hold every case: filter on `case`); [] when not measured."""

    def report(self, tables: Tables, context: ReportContext) -> ReportSection | None:
        """This driver's report section, or None when the run has nothing of it."""


@dataclass(frozen=True, slots=True)
class DriverSpec:
    """A Driver made of plain functions: what a driver package usually exports as `DRIVER`."""

    name: str
    phases: tuple[type[BaseModel], ...]
    tables: tuple[str, ...]
    run_phase: Callable[[PhaseContext], None]
    summary_metrics: Callable[[Tables, str], list[Metric]] = lambda tables, case: []
    report_section: Callable[[Tables, ReportContext], ReportSection | None] = lambda tables, context: None
    ratio_metrics: tuple[str, ...] = ()

    def run(self, context: PhaseContext) -> None:
        self.run_phase(context)

    def metrics(self, tables: Tables, case: str) -> list[Metric]:
        return self.summary_metrics(tables, case)

    def report(self, tables: Tables, context: ReportContext) -> ReportSection | None:
        return self.report_section(tables, context)


def phase_kinds_of(driver: Driver) -> tuple[str, ...]:
    """The `kind` values of a driver's phase models (each model's `kind` field is a one-value Literal)."""
    kinds = []
    for model in driver.phases:
        default = model.model_fields["kind"].default
        if not isinstance(default, str):
            raise TypeError(f"{model.__name__}: a phase model needs `kind: Literal[...] = \"...\"`")
        kinds.append(default)
    return tuple(kinds)


@dataclass(frozen=True, slots=True)
class Registry:
    """Drivers by phase kind; a kind belongs to exactly one driver."""

    drivers: tuple[Driver, ...]
    _by_kind: dict[str, Driver] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_kind: dict[str, Driver] = {}
        for driver in self.drivers:
            for kind in phase_kinds_of(driver):
                if kind in by_kind:
                    raise ValueError(f"phase kind {kind!r} is claimed by {by_kind[kind].name} and {driver.name}")
                by_kind[kind] = driver
        object.__setattr__(self, "_by_kind", by_kind)

    def __iter__(self) -> Iterator[Driver]:
        return iter(self.drivers)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._by_kind)

    def for_kind(self, kind: str) -> Driver:
        try:
            return self._by_kind[kind]
        except KeyError:
            raise KeyError(f"no driver runs phase kind {kind!r} (known: {', '.join(self._by_kind)})") from None

    def phase_models(self) -> tuple[type[BaseModel], ...]:
        return tuple(model for driver in self.drivers for model in driver.phases)

    def phase_union(self) -> Any:
        """The pydantic type of one phase: the drivers' models, told apart by `kind`."""
        return Annotated[Union[self.phase_models()], Field(discriminator="kind")]  # noqa: UP007


def metrics_of(drivers: Sequence[Driver], tables: Tables, case: str) -> list[Metric]:
    return [metric for driver in drivers for metric in driver.metrics(tables, case)]


# -- the registry: one line per driver ----------------------------------------------------------
# Driver packages build their DRIVER from the types above, so they are imported after them, and the
# registry is assembled on first use (a driver package imported on its own finds this module whole).
from harness.drivers import capacity, faults, invariants, jobs, kueuebaseline, locust, watchcache  # noqa: E402

_DRIVER_PACKAGES = (
    locust,
    watchcache,
    kueuebaseline,
    capacity,
    invariants,
    faults,
    jobs,
)


@cache
def drivers() -> Registry:
    """Every registered driver."""
    return Registry(tuple(package.DRIVER for package in _DRIVER_PACKAGES))
