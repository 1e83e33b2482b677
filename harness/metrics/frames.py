"""The tidy tables a run's measurements become (pure): one row per observation.

`labels` is a JSON object with sorted keys (unambiguous in CSV and parquet alike);
`expand_labels` turns it into columns and `pick` filters on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields

import orjson
import pandas as pd

from harness.metrics import census as censuses, samples, slo, summarising

SCHEMA_VERSION = 1
"""Bumped when a column changes meaning; readers refuse newer versions."""

OBSERVATION_COLUMNS = ("source", "metric", "labels", "phase", "t", "value")
SUMMARY_COLUMNS = ("source", "metric", "stat", "labels", "phase", "t", "value")


@dataclass(slots=True)
class Frames:
    """Everything one collection produced. `t` is seconds since `start()` on the collector's clock."""

    observations: pd.DataFrame
    """Every scraped series and process sample: source, metric, labels, phase, t, value.
    Background scrapes carry histograms' _sum/_count; phase boundaries also their buckets."""
    summary: pd.DataFrame
    """Per phase: source, metric, stat (delta, rate, first, last, max, count, sum, mean, p50, p90, p99), labels, phase, t, value."""
    slo: pd.DataFrame
    """Per phase and (verb, group, resource, subresource, scope): kind, count, p99_seconds, threshold_seconds, passed."""
    census: pd.DataFrame
    """etcd object sizes per resource at stop(): resource, count, total_bytes, max_bytes, p50_bytes, p99_bytes, largest_key."""
    names: pd.DataFrame
    """Per family: source, family, exposed_as (the name this server version uses; empty if absent), server_version."""
    scrapes: pd.DataFrame
    """Per scrape: source, kind (boundary|background), phase, t, seconds, series, error."""
    meta: dict = field(default_factory=dict)

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables by name, as the results layer writes them (parquet and CSV)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "meta"}


def labels_json(labels: samples.Labels, memo: dict[samples.Labels, str] | None = None) -> str:
    if memo is not None and labels in memo:
        return memo[labels]
    text = orjson.dumps(dict(labels), option=orjson.OPT_SORT_KEYS).decode()
    if memo is not None:
        memo[labels] = text
    return text


def observations_frame(scrapes: Iterable[tuple[samples.Scrape, str]],
                       process_samples: Iterable[tuple[summarising.ProcessSample, str]]) -> pd.DataFrame:
    """Rows of every (scrape, phase) and (process sample, phase)."""
    columns: dict[str, list] = {c: [] for c in OBSERVATION_COLUMNS}
    memo: dict[samples.Labels, str] = {}

    def add(source, metric, labels, phase, t, value) -> None:
        for column, item in zip(OBSERVATION_COLUMNS, (source, metric, labels_json(labels, memo), phase, t, value)):
            columns[column].append(item)

    for scrape, phase in scrapes:
        for (metric, labels), value in scrape.values.items():
            add(scrape.source, metric, labels, phase, scrape.t, value)
    for sample, phase in process_samples:
        labels = (("component", sample.component), ("pid", str(sample.pid)))
        add("process", "rss_bytes", labels, phase, sample.t, float(sample.rss_bytes))
        add("process", "cpu_seconds", labels, phase, sample.t, sample.cpu_seconds)
    return pd.DataFrame(columns, columns=list(OBSERVATION_COLUMNS))


def summary_frame(rows: Sequence[summarising.Row]) -> pd.DataFrame:
    memo: dict[samples.Labels, str] = {}
    data = {c: [getattr(r, c) if c != "labels" else labels_json(r.labels, memo) for r in rows] for c in SUMMARY_COLUMNS}
    return pd.DataFrame(data, columns=list(SUMMARY_COLUMNS))


def slo_frame(verdicts: Sequence[slo.Verdict]) -> pd.DataFrame:
    columns = [f.name for f in fields(slo.Verdict)]
    return pd.DataFrame([asdict(v) for v in verdicts], columns=columns)


def census_frame(census: censuses.Census | None) -> pd.DataFrame:
    columns = [f.name for f in fields(censuses.ResourceSizes)]
    rows = [asdict(r) for r in census.resources] if census else []
    return pd.DataFrame(rows, columns=columns)


def expand_labels(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with one column per label name (missing labels are empty strings).

    A label named like a column (`phase`, `source`) becomes `<name>_label`.
    """
    parsed = pd.DataFrame([orjson.loads(text) for text in frame["labels"]], index=frame.index).fillna("")
    parsed = parsed.rename(columns=lambda name: f"{name}_label" if name in frame.columns else name)
    return frame.drop(columns=["labels"]).join(parsed)


def pick(frame: pd.DataFrame, **match) -> pd.DataFrame:
    """Rows whose columns, or labels, equal the given values: pick(summary, metric=..., stat="delta", verb="LIST")."""
    mask = pd.Series(True, index=frame.index)
    label_match = {}
    for name, value in match.items():
        if name in frame.columns and name != "labels":
            mask &= frame[name] == value
        else:
            label_match[name] = str(value)
    if label_match:
        candidates = frame.loc[mask, "labels"]
        keep = [all(labels.get(k) == v for k, v in label_match.items()) for labels in map(orjson.loads, candidates)]
        mask &= pd.Series(keep, index=candidates.index, dtype=bool).reindex(frame.index, fill_value=False)
    return frame[mask]


def total(frame: pd.DataFrame, **match) -> float:
    """Sum of `value` over the picked rows (0.0 when none match)."""
    return float(pick(frame, **match)["value"].sum())
