"""README tables of jobs runs, from a run folder's committed tables (jobs_figures, jobs_jobs, summary).

Spec of a `jobs-cases` block (paths relative to the README):

    run: kueue-workers-10k-20261201-070901
    phase: jobs                       # optional
    columns: {reference: "implementation=reference,r0", "Kueue, 5 workers": "implementation=kueue,r0"}
    rows: [wall, pods_bound, admission]

One column per case (header: case id), one row per name of ROWS. The work-queue rows read each
process's own /metrics (harness.drivers.jobs.resources): Kueue's Job reconciler and
kube-controller-manager's job controller both name their queue `job`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from harness.drivers.jobs import resources, tabulating
from harness.errors import KqbenchError
from harness.readmes import inputs, markdown


@dataclass(frozen=True)
class Case:
    """One case of a committed jobs run."""

    folder: Path
    case: str
    phase: str

    @cached_property
    def _figures(self) -> pd.Series:
        frame = _read(self.folder, "jobs_figures")
        mine = frame[(frame["case"] == self.case) & (frame["job_class"].fillna("") == "")]
        if mine.empty:
            raise KqbenchError(f"no case {self.case!r} in {self.folder}/tables/jobs_figures.parquet "
                               f"(cases: {', '.join(frame['case'].unique())})")
        return mine.drop_duplicates("metric").set_index("metric")["value"]

    def figure(self, metric: str) -> float:
        return float(self._figures[metric])

    def step_p50(self, begin: str, end: str) -> float | None:
        """The case's jobs_figures row of the two steps (None: no Job had both); runs made before
        jobs_figures held step rows compute it from jobs_jobs, as the driver now does."""
        steps = self._figures[self._figures.index.str.startswith(f"{tabulating.STEP_METRIC}:")]
        if steps.empty:
            return tabulating.step_p50(self.jobs, begin, end)
        metric = tabulating.step_metric(begin, end)
        return float(steps[metric]) if metric in steps.index else None

    def class_figure(self, metric: str, job_class: str) -> float | None:
        frame = _read(self.folder, "jobs_figures")
        mine = frame[(frame["case"] == self.case) & (frame["job_class"] == job_class) & (frame["metric"] == metric)]
        return None if mine.empty else float(mine["value"].iloc[0])

    @cached_property
    def jobs(self) -> pd.DataFrame:
        frame = _read(self.folder, "jobs_jobs")
        return frame[frame["case"] == self.case]

    @cached_property
    def summary(self) -> pd.DataFrame:
        return _read(self.folder, "summary")

    def kueue_queue(self, name: str) -> pd.Series | None:
        table = resources.kueue_controllers(self.summary, self.case, self.phase).set_index("controller")
        return table.loc[name] if name in table.index else None

    def controller_manager_queue(self, name: str) -> pd.Series | None:
        table = resources.controller_manager_queues(self.summary, self.case, self.phase).set_index("work_queue")
        return table.loc[name] if name in table.index else None

    def cores(self, component: str) -> float | None:
        table = resources.by_process(self.summary, self.case, self.phase).set_index("component")
        return float(table.loc[component, "cpu_cores"]) if component in table.index else None

    def cores_sum(self) -> float:
        return float(resources.by_process(self.summary, self.case, self.phase)["cpu_cores"].sum())


_TABLES: dict[tuple[Path, str], pd.DataFrame] = {}


def _read(folder: Path, table: str) -> pd.DataFrame:
    key = (folder.resolve(), table)
    if key not in _TABLES:
        path = folder / "tables" / f"{table}.parquet"
        if not path.is_file():
            raise inputs.missing(path)
        _TABLES[key] = pd.read_parquet(path)
    return _TABLES[key]


@dataclass(frozen=True, slots=True)
class Row:
    label: str
    cell: Callable[[Case], str]
    scalar: Callable[[Case], float | None] | None = None
    """The one number a ratio column divides (None: the row has no ratio)."""


def _figure_row(label: str, metric: str, digits: int) -> Row:
    return Row(label, lambda c: markdown.number(c.figure(metric), digits), lambda c: c.figure(metric))


def _p50_p99(label: str, prefix: str) -> Row:
    return Row(label, lambda c: markdown.durations(c.figure(f"{prefix}_p50_seconds"), c.figure(f"{prefix}_p99_seconds")),
               lambda c: c.figure(f"{prefix}_p50_seconds"))


def _kueue_workers(c: Case) -> str:
    row = c.kueue_queue("job")
    return "" if row is None else f"{markdown.number(row['workers'])}, {markdown.number(row['most_workers_busy'])}"


def _kueue_job_queue(c: Case) -> str:
    row = c.kueue_queue("job")
    return "" if row is None else (f"{markdown.number(row['largest_backlog'])}, "
                                   f"{markdown.durations(row['queue_wait_p50_s'], row['queue_wait_p99_s'])}")


def _controller_manager_job_queue(c: Case) -> str:
    row = c.controller_manager_queue("job")
    return "" if row is None else f"{markdown.number(row['largest_backlog'])}, {markdown.duration(row['queue_wait_p99_s'])}"


def _controller_manager_job_backlog(c: Case) -> str:
    row = c.controller_manager_queue("job")
    return "" if row is None else markdown.number(row["largest_backlog"])


def _jobs_completed(c: Case) -> str:
    done, total = c.figure("jobs_completed"), c.figure("jobs")
    return markdown.number(done) if done == total else f"{markdown.number(done)} of {markdown.number(total)}"


def _last_complete(c: Case) -> float:
    """jobs_figures' figure; runs made before it was there: from jobs_jobs."""
    if tabulating.LAST_COMPLETE_METRIC in c._figures.index:
        return c.figure(tabulating.LAST_COMPLETE_METRIC)
    return float(c.jobs["completed_s"].max())


def _pods_bound(c: Case) -> str:
    return (f"{markdown.number(c.figure('pods_bound_per_second_sustained'), 1)} "
            f"({markdown.number(c.figure('pods_bound_per_second_peak_10s'), 1)})")


ROWS: dict[str, Row] = {
    "jobs_completed": Row("Jobs completed", _jobs_completed),
    "wall": Row("wall", lambda c: markdown.duration(c.figure("wall_seconds"), 0), lambda c: c.figure("wall_seconds")),
    "last_complete": Row("last Job Complete", lambda c: markdown.duration(_last_complete(c), 1), _last_complete),
    "pods_bound": _figure_row("pods bound per second, sustained", "pods_bound_per_second_sustained", 1),
    "pods_bound_peak": Row("pods bound per second, sustained (best 10 s)", _pods_bound,
                           lambda c: c.figure("pods_bound_per_second_sustained")),
    "jobs_per_second": _figure_row("Jobs completed per second, sustained", "jobs_completed_per_second_sustained", 1),
    "admission": _p50_p99("time to admission p50 / p99", "time_to_admission"),
    "first_running": _p50_p99("time to first pod Running p50 / p99", "time_to_first_pod_running"),
    "complete": _p50_p99("time to Complete p50 / p99", "time_to_complete"),
    "pod_bind": _p50_p99("pod created -> bound p50 / p99", "pod_create_to_bound"),
    "pod_start": _p50_p99("pod bound -> Running p50 / p99", "pod_bound_to_running"),
    "most_jobs_running": _figure_row("most Jobs running at once", "most_jobs_running", 0),
    "suspensions": _figure_row("Jobs suspended again (preempted)", "suspensions", 0),
    "kueue_job_workers": Row("Kueue's `job` reconciler: workers, most busy", _kueue_workers),
    "kueue_job_queue": Row("Kueue's `job` work queue: largest backlog, time in queue p50 / p99", _kueue_job_queue),
    "kcm_job_queue": Row("kube-controller-manager's `job` queue: largest backlog, wait p99", _controller_manager_job_queue),
    "kcm_job_backlog": Row("kube-controller-manager's `job` queue: largest backlog", _controller_manager_job_backlog),
    "apiserver_cores": Row("kube-apiserver cores (mean in the phase)", lambda c: markdown.number(c.cores("kube-apiserver"), 2),
                           lambda c: c.cores("kube-apiserver")),
    "cores_sum": Row("sum of the processes' cores", lambda c: markdown.number(c.cores_sum(), 2), lambda c: c.cores_sum()),
}
"""Row name -> what it shows. Besides these: `cores:COMPONENT` (mean cores of one process in the phase),
`step:FROM:TO` (p50 over Jobs of TO_s - FROM_s, FROM before TO of created, admitted, unsuspended,
first_running, completed, workload_finished: jobs_figures' `step_p50_seconds:FROM:TO`) and
`topology:CLASS` (of the class's Jobs with every pod bound, how many ran in the one domain of the level
they required)."""


_STEP_LABELS = {"first_running": "first pod Running", "completed": "Complete", "workload_finished": "Workload Finished"}
STEPS = {step: _STEP_LABELS.get(step, step) for step in tabulating.STEPS}
"""A Job's steps, in order, and how a row names them."""


def _step_pair(argument: str) -> tuple[str, str] | None:
    """FROM, TO of `FROM:TO` when both are steps and FROM comes first."""
    begin, _, end = argument.partition(":")
    order = tabulating.STEPS
    return (begin, end) if begin in order and end in order and order.index(begin) < order.index(end) else None


def row(name: str) -> Row:
    """The row a spec names (a ROWS name or a parametrised one); KqbenchError for an unknown name."""
    kind, _, argument = name.partition(":")
    if name in ROWS:
        return ROWS[name]
    if kind == "cores" and argument:
        return Row(argument, lambda c: markdown.number(c.cores(argument), 2), lambda c: c.cores(argument))
    if kind == "step" and (pair := _step_pair(argument)):
        begin, end = pair
        return Row(f"{STEPS[begin]} -> {STEPS[end]} p50", lambda c: markdown.duration(c.step_p50(begin, end)),
                   lambda c: c.step_p50(begin, end))
    if kind == "topology" and argument:
        return Row(f"{argument}: Jobs in the one domain they required, of those with every pod bound",
                   lambda c: _kept(c, argument), lambda c: c.class_figure("topology_jobs_in_one_domain", argument))
    raise KqbenchError(f"unknown row {name!r} (known: {', '.join(ROWS)}, cores:COMPONENT, "
                        f"step:FROM:TO of {', '.join(STEPS)} (FROM first), topology:CLASS)")


def _kept(c: Case, job_class: str) -> str:
    kept, judged = (c.class_figure(m, job_class) for m in ("topology_jobs_in_one_domain", "topology_jobs_judged"))
    if kept is None or judged is None:
        raise KqbenchError(f"case {c.case!r} has no topology figures for class {job_class!r} (its Jobs required no level)")
    return f"{markdown.number(kept)} of {markdown.number(judged)}"


def _ratio(numerator: Case, denominator: Case, of: Row) -> str:
    if of.scalar is None:
        return ""
    top, bottom = of.scalar(numerator), of.scalar(denominator)
    return "" if top is None or not bottom else markdown.ratio(top / bottom)


def cases(spec: dict, folder: Path) -> str:
    """The `jobs-cases` table: one column per case of one run, one row per named row; `rows` items are a
    name or {name: label}; `ratios: [{label: ..., of: [column, column]}]` add a column each, the first
    column's row figure over the second's (p50 for a p50 / p99 row)."""
    run = folder / spec["run"]
    phase = spec.get("phase", "jobs")
    columns: dict[str, str] = spec["columns"]
    picked = {label: Case(run, case, phase) for label, case in columns.items()}
    ratios = spec.get("ratios") or []
    for ratio in ratios:
        if len(ratio.get("of") or ()) != 2 or not set(ratio["of"]) <= set(picked):
            raise KqbenchError(f"ratio {ratio.get('label')!r}: `of` names two of the columns ({', '.join(picked)})")
    lines = []
    for item in spec["rows"]:
        name, label = next(iter(item.items())) if isinstance(item, dict) else (item, None)
        shown = row(name)
        cells = [shown.cell(c) for c in picked.values()]
        cells += [_ratio(picked[r["of"][0]], picked[r["of"][1]], shown) for r in ratios]
        lines.append([label or shown.label, *cells])
    return markdown.table(["", *columns, *(r["label"] for r in ratios)], lines)
