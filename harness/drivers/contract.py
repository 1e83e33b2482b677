"""The types a phase driver implements and uses: the only module of harness.drivers a driver imports.

A driver is one experiment in a folder of its own (`harness/drivers/<name>/`). It owns:
- `phases`: its phase models (pydantic, each with a `kind: Literal[...]` field); the scenario's
  discriminated `Phase` union is built from every driver's models, so a scenario names a driver by
  writing one of its kinds;
- `mix_fields`: models of the load.mix fields only it reads; the scenario's mix entry is assembled
  from every driver's, so a scenario writes them flat;
- `run(context)`: drives one phase (see PhaseContext);
- `tables`: the names of the tables it writes (constants exported by its package);
- `metrics(tables, case)`: its summary.json entries of one case, read from the run's tables;
- `report(tables, context)`: optionally its section of report.html;
- `ratio_metrics`: prefixes of its metrics whose strategy ratios within one run the summary reports
  (ratios cancel the machine's speed: gates on them are far less noisy);
- `calibrated_metrics`: names of its latency metrics whose ratio to the case's calibration (the
  machine's own speed that day, `harness.running.calibrating`) the summary reports, for every design;
- what the report asks of every driver, so that it names no experiment itself: `questions` (its
  verdict questions, answered from the summary), `figures()` (its per-design figures among the
  report's own), `perfdata(tables, run_id)` (its items of perfdata.json), `request_counts(tables)`
  (the requests behind its request-percentile metrics, shown as n=) and `case_pending(scenario,
  case)` (how many Workloads a case held: the x axis of the per-design figures).

PhaseContext, what a run function gets (one object, so that adding a field breaks no driver):
- `cluster` (ClusterInfo: kubeconfig, ports, binary versions), `scenario` (the case's validated
  Scenario), `phase_name` (the key in `phases:`), `phase` (its typed model), `out_dir` (a folder of
  the phase's own for raw files);
- `scheduler`: the running scheduler (`pid()`, `metrics_url()`, `metrics_endpoint()`, `alive()`), None when the scenario runs none;
- `restart_scheduler(metrics_port)`: a fresh scheduler of the same section (its implementation's restart);
- `mark_phase(name)`: starts a measured sub-phase (e.g. `capacity/step-3`); the measurements split
  their per-phase numbers at every mark, and the driver's tables should say the same name;
- `watch_process(component, pid)`: the measurements sample this process from now on (a driver that
  restarts the scheduler names the new one, so its RSS and CPU stay in the run's tables);
- `say(line)`: one progress line on the terminal;
- `on_teardown(name, action)`: the case runs `action` at its end, also on failure or Ctrl-C, newest
  first (e.g. stopping what a phase started for the phases after it, as the bulk fill's keeper);
- `emit(table, frame)`: hands a table to the runner as soon as it exists (without the `case` column,
  the runner adds it). The runner keeps emitted tables also when the case fails or is interrupted, so
  a driver that emits after every step loses at most the step that was running.

Driver packages import this module and libraries (harness.load, harness.metrics, ...), never
`registry` (which imports them) nor each other (lint-imports keeps it so).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import pandas as pd
from pydantic import BaseModel

if TYPE_CHECKING:
    from harness.clusters import state
    from harness.implementations import contract as implementations
    from harness.scenarios import sections

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
class Question:
    """A verdict question: which design is best at it, answered from the summary's metrics."""

    title: str
    measure: str
    """What the number is, in words."""
    metrics: tuple[str, ...]
    """The summary metrics that answer it, in order of preference (the first measured in two columns is used)."""
    others_note: str = ""
    """Said of the other answers when this question is answered (its runs compare them unevenly); such a
    question is only asked of runs that measured it."""
    place: int = 50
    """Where in the verdict block, lower first (every question of the report sorted by it)."""


Cases = pd.DataFrame
"""One row per case of the report: id, column (its design's label), pending, strategy, status."""


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure of the report: drawn from the run's tables, or named as not measured."""

    title: str
    draw: Callable[[Tables, Cases, Mapping[str, str]], bytes | None]
    """(tables, cases, colours by column) -> a PNG, or None when the run did not measure what it draws."""
    wide: bool = False
    """A figure of one panel per design, across the page."""
    place: int = 50
    """Where among the report's figures, lower first."""


@dataclass(frozen=True, slots=True)
class PhaseContext:
    """Everything a driver's run function may use (see the module docstring)."""

    cluster: state.ClusterInfo
    scenario: sections.ScenarioFields
    phase_name: str
    phase: Any
    """The phase's model: one of the driver's own `phases`."""
    out_dir: Path
    scheduler: implementations.SchedulerHandle | None = None
    restart_scheduler: Callable[[int], implementations.SchedulerHandle] | None = None
    """A new scheduler of the scenario's section, the previous one stopped, its /metrics on this port (its
    implementation's restart; its log in out_dir); None when the run starts no scheduler."""
    mark_phase: Callable[[str], None] = lambda name: None
    watch_process: Callable[[str, int], None] = lambda component, pid: None
    say: Callable[[str], None] = print
    emit: Callable[[str, pd.DataFrame], None] = lambda table, frame: None
    on_teardown: Callable[[str, Callable[[], None]], None] = lambda name, action: None


class Driver(Protocol):
    """One experiment: its phase kinds, how it runs a phase, its tables, metrics and report section."""

    @property
    def name(self) -> str: ...

    @property
    def phases(self) -> tuple[type[BaseModel], ...]: ...

    @property
    def mix_fields(self) -> tuple[type[BaseModel], ...]:
        """Fields its phases read in each load.mix entry beyond the shared ones (models on
        harness.scenarios.base); the scenario's mix entry is assembled from every driver's."""

    @property
    def tables(self) -> tuple[str, ...]: ...

    @property
    def ratio_metrics(self) -> tuple[str, ...]: ...

    @property
    def calibrated_metrics(self) -> tuple[str, ...]: ...

    @property
    def questions(self) -> tuple[Question, ...]: ...

    def run(self, context: PhaseContext) -> None:
        """Drive one phase, emitting tables as they exist; raise KqbenchError (one line) on failure."""

    def metrics(self, tables: Tables, case: str) -> list[Metric]:
        """Summary entries of one case (tables hold every case: filter on `case`); [] when not measured."""

    def report(self, tables: Tables, context: ReportContext) -> ReportSection | None:
        """This driver's report section, or None when the run has nothing of it."""

    def figures(self) -> tuple[Figure, ...]:
        """Its figures among the report's per-design ones (called only when a report is drawn)."""

    def perfdata(self, tables: Tables, run_id: str) -> list[dict]:
        """Its items of perfdata.json (perfdash's dataItems)."""

    def request_counts(self, tables: Tables) -> Mapping[tuple[str, str], int]:
        """(metric, case) -> requests behind each of its request-percentile metrics."""

    def case_pending(self, scenario: Mapping, params: Mapping) -> int | None:
        """Workloads a case held, from run.json's scenario and the case's params; None: not this driver's to say."""


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
    calibrated_metrics: tuple[str, ...] = ()
    questions: tuple[Question, ...] = ()
    report_figures: Callable[[], tuple[Figure, ...]] = lambda: ()
    perfdata_items: Callable[[Tables, str], list[dict]] = lambda tables, run_id: []
    requests_behind: Callable[[Tables], Mapping[tuple[str, str], int]] = lambda tables: {}
    pending_of: Callable[[Mapping, Mapping], int | None] = lambda scenario, params: None
    mix_fields: tuple[type[BaseModel], ...] = ()

    def run(self, context: PhaseContext) -> None:
        self.run_phase(context)

    def metrics(self, tables: Tables, case: str) -> list[Metric]:
        return self.summary_metrics(tables, case)

    def report(self, tables: Tables, context: ReportContext) -> ReportSection | None:
        return self.report_section(tables, context)

    def figures(self) -> tuple[Figure, ...]:
        return self.report_figures()

    def perfdata(self, tables: Tables, run_id: str) -> list[dict]:
        return self.perfdata_items(tables, run_id)

    def request_counts(self, tables: Tables) -> Mapping[tuple[str, str], int]:
        return self.requests_behind(tables)

    def case_pending(self, scenario: Mapping, params: Mapping) -> int | None:
        return self.pending_of(scenario, params)
