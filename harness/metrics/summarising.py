"""Per-phase numbers from the scrapes of a phase: counter deltas and rates, gauge ranges,
histogram counts and quantiles, process CPU and memory (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.metrics import catalog, prommath, samples

QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True, slots=True)
class Phase:
    """A named stretch of a run, in seconds on the collector's clock."""

    name: str
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class ProcessSample:
    """RSS and CPU seconds (user + system) of one process at one instant."""

    t: float
    component: str
    pid: int
    rss_bytes: int
    cpu_seconds: float


@dataclass(frozen=True, slots=True)
class Row:
    """One per-phase number: `stat` says which (delta, rate, p99, max, ...)."""

    source: str
    metric: str
    stat: str
    labels: samples.Labels
    phase: str
    t: float
    value: float


def in_phase(scrapes: Sequence[samples.Scrape], phase: Phase) -> list[samples.Scrape]:
    """Scrapes that answered, from the phase's start boundary to its end boundary, in time order."""
    return sorted((s for s in scrapes if s.error is None and phase.start <= s.t <= phase.end), key=lambda s: s.t)


def summarise(scrapes: Sequence[samples.Scrape], phase: Phase, families: tuple[catalog.Family, ...]) -> list[Row]:
    """Every family's per-phase numbers from one source's scrapes."""
    inside = in_phase(scrapes, phase)
    if len(inside) < 2:
        return []  # one observation has no delta; the phase is reported without numbers
    rows: list[Row] = []
    source = inside[0].source
    for family in catalog.for_source(source, families):
        def row(stat: str, labels: samples.Labels, value: float, metric: str = family.name) -> None:
            rows.append(Row(source, metric, stat, labels, phase.name, phase.end, value))

        if family.kind == catalog.COUNTER:
            for labels, delta in sorted(prommath.summed_increases(inside, family.name, ()).items()):
                if delta == 0:
                    continue  # unchanged series stay in the observations table; here they would drown the changes
                row("delta", labels, delta)
                row("rate", labels, prommath.rate(delta, phase.seconds))
        elif family.kind == catalog.GAUGE:
            for labels, values in sorted(_gauge_series(inside, family.name).items()):
                row("first", labels, values[0])
                row("last", labels, values[-1])
                row("max", labels, max(values))
        else:
            _histogram_rows(inside, family, phase, row)
    return rows


def _gauge_series(scrapes: Sequence[samples.Scrape], metric: str) -> dict[samples.Labels, list[float]]:
    series: dict[samples.Labels, list[float]] = {}
    for scrape in scrapes:
        for (name, labels), value in scrape.values.items():
            if name == metric:
                series.setdefault(labels, []).append(value)
    return series


def _histogram_rows(scrapes, family: catalog.Family, phase: Phase, row) -> None:
    counts = prommath.summed_increases(scrapes, family.name + "_count", family.by)
    sums = prommath.summed_increases(scrapes, family.name + "_sum", family.by)
    buckets = prommath.bucket_increases(scrapes, family.name, family.by)
    for labels, count in sorted(counts.items()):
        if count <= 0:
            continue  # a series that observed nothing in this phase says nothing about it
        row("count", labels, count)
        row("rate", labels, prommath.rate(count, phase.seconds))
        row("sum", labels, sums.get(labels, math.nan))
        row("mean", labels, sums.get(labels, math.nan) / count)
        for q in QUANTILES:
            row(f"p{round(q * 100):d}", labels, prommath.histogram_quantile(q, buckets.get(labels, [])))


def summarise_processes(process_samples: Sequence[ProcessSample], phase: Phase) -> list[Row]:
    """Per process: RSS first/last/max, CPU seconds used and mean cores busy in the phase."""
    by_process: dict[tuple[str, int], list[ProcessSample]] = {}
    for sample in sorted(process_samples, key=lambda s: s.t):
        if phase.start <= sample.t <= phase.end:
            by_process.setdefault((sample.component, sample.pid), []).append(sample)
    rows = []
    for (component, pid), series in sorted(by_process.items()):
        labels = (("component", component), ("pid", str(pid)))

        def row(metric: str, stat: str, value: float) -> None:
            rows.append(Row("process", metric, stat, labels, phase.name, phase.end, value))

        rss = [s.rss_bytes for s in series]
        row("rss_bytes", "first", rss[0])
        row("rss_bytes", "last", rss[-1])
        row("rss_bytes", "max", max(rss))
        if len(series) > 1:
            cpu = prommath.increase([s.cpu_seconds for s in series])
            row("cpu_seconds", "delta", cpu)
            row("cpu_seconds", "rate", prommath.rate(cpu, series[-1].t - series[0].t))
    return rows


def cores_between(before: Sequence[ProcessSample], after: Sequence[ProcessSample]) -> dict[str, float]:
    """Cores each component used between two samplings (1.0 = one core busy throughout).

    Each over the time between its own two samples, never a window timed apart from the readings: CPU
    read before an apply and after a scrape, divided by the wait in between, gave 3.94 cores of a
    2-core machine. A component restarted in between (another pid) or absent from either is left out.
    """
    first = {(s.component, s.pid): s for s in before}
    used: dict[str, float] = {}
    for sample in after:
        start = first.get((sample.component, sample.pid))
        if start is not None and sample.t > start.t:
            used[sample.component] = (sample.cpu_seconds - start.cpu_seconds) / (sample.t - start.t)
    return used
