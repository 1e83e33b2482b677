"""Prometheus text -> the samples of the families we collect, under their reporting names (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import parser

from harness.metrics import catalog

Labels = tuple[tuple[str, str], ...]
"""Sorted (name, value) pairs: hashable, so a series is (metric, labels)."""
SeriesKey = tuple[str, Labels]

HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


@dataclass(slots=True)
class Scrape:
    """One scrape of one source: values by series, and which exposed names it carried."""

    source: str
    t: float
    """Seconds on the collector's clock."""
    values: dict[SeriesKey, float] = field(default_factory=dict)
    exposed: frozenset[str] = frozenset()
    """Family names (as exposed) seen in the text, e.g. to record which alias a version uses."""
    error: str | None = None


def metric_sum(text: str, name: str, **labels: str) -> float:
    """Sum of a metric's samples whose labels include `labels` (from Prometheus text)."""
    return sum(sample.value for family in parser.text_string_to_metric_families(text) for sample in family.samples
               if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()))


def labels_of(mapping: dict[str, str], drop: tuple[str, ...] = ()) -> Labels:
    return tuple(sorted((k, v) for k, v in mapping.items() if k not in drop))


def _line_name(line: str) -> str:
    if line.startswith("#"):
        parts = line.split(None, 3)
        return parts[2] if len(parts) > 2 else ""
    for index, char in enumerate(line):
        if char in "{ ":
            return line[:index]
    return line


def _base(name: str) -> str:
    for suffix in HISTOGRAM_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def keep_lines(text: str, wanted: frozenset[str], buckets: bool = True) -> str:
    """Only the lines of wanted families: string work is far cheaper than parsing 13k lines.

    Without buckets (background scrapes) a histogram keeps its _sum and _count: rates over time
    stay visible at a tenth of the parsing cost; quantiles come from the phase-boundary scrapes.
    """
    kept = []
    for line in text.splitlines():
        if not line:
            continue
        name = _line_name(line)
        if not buckets and name.endswith("_bucket"):
            continue
        if name in wanted or _base(name) in wanted:
            kept.append(line)
    return "\n".join(kept) + "\n"


def parse(text: str, source: str, t: float, families: tuple[catalog.Family, ...] = catalog.FAMILIES,
          buckets: bool = True) -> Scrape:
    """Parse one scrape; samples are renamed to each family's reporting name (aliases folded)."""
    mine = catalog.for_source(source, families)
    alias_to_name = {alias: f.name for f in mine for alias in f.names}
    scrape = Scrape(source=source, t=t)
    exposed = set()
    for family in parser.text_string_to_metric_families(keep_lines(text, frozenset(alias_to_name), buckets)):
        for sample in family.samples:
            name = sample.name
            if name in alias_to_name:
                exposed.add(name)
                reported = alias_to_name[name]
            elif _base(name) in alias_to_name:
                exposed.add(_base(name))
                reported = alias_to_name[_base(name)] + name[len(_base(name)):]
            else:
                continue
            scrape.values[(reported, labels_of(sample.labels))] = float(sample.value)
    scrape.exposed = frozenset(exposed)
    return scrape


def failed(source: str, t: float, error: str) -> Scrape:
    """A scrape that did not answer: kept, so gaps are visible rather than silently skipped."""
    return Scrape(source=source, t=t, error=error)
