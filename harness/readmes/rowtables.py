"""A README table with one row per row of a committed file (CSV, parquet or a JSON list of records).

Spec of a `rows` block (paths relative to the README):

    file: full-size/watchcache.csv
    records: runs                              # JSON only: the dotted key of the list (default: the document)
    only: {metric: [wall_seconds, evictions]}  # these records, in this order (default: all, in file order)
    files: {POSTs 10k: a.json, bulk: b.json}   # instead of file: one record per JSON document, nested keys
                                               # joined by _, its label as `label` (a key another file
                                               # lacks is missing in this one)
    columns:                                   # header -> a template over the row's columns
      arm: "{arm}"
      p50 s: "{p50_ms / 1000:.1f}"
      apiserver RSS start -> peak (GB): "{apiserver_rss_start_mb / 1000:.2f} -> {apiserver_rss_peak_mb / 1000:.2f}"

A template field is an arithmetic expression of the row's column names and numbers (+ - * / //,
parentheses) with an optional format spec; a field whose value is missing (empty, NaN) makes the
cell `-`. Nothing else is evaluated: a name that is not a column is an error naming the columns.

A latency quantile (`..._p99_ms`) beside a count of its requests (`..._requests`) too small to have
that quantile apart from the slowest request (`intervals.has_quantile`: 100 for a p99) is never
published: a cell naming it says "too few samples" with the count (name `..._max_ms` to show the slowest).
"""

from __future__ import annotations

import ast
import json
import math
import numbers
import operator
import re
import string
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyperf

from harness.errors import KqbenchError
from harness.readmes import inputs, markdown
from harness.stats import intervals

_NOT_A_NAME = re.compile(r"[^0-9A-Za-z_]+")
_OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
              ast.FloorDiv: operator.floordiv}


class _Missing(Exception):
    """A field's value is absent in this row; the cell says its message, or `-`."""


@dataclass(frozen=True, slots=True)
class _TooFew:
    """A quantile held back: `requests` are too few to have it (`intervals.has_quantile`)."""

    q: float
    requests: int

    def __str__(self) -> str:
        return f"too few samples for a p{self.q * 100:g} ({self.requests:,} requests)"


def _held_back(row: dict) -> dict:
    """The row with every quantile whose sibling request count is below its floor replaced by a _TooFew."""
    out = dict(row)
    for key, value in row.items():
        q = intervals.quantile_of(f"_{key}")  # a column of its own (`p99_ms`) as well as a nested key
        if q is None or value is None:
            continue
        base = str(key)[:max(str(key).rfind("_p"), 0)]
        requests = row.get(f"{base}_requests" if base else "requests")
        if (isinstance(requests, numbers.Real) and math.isfinite(requests)
                and not intervals.has_quantile(q, int(requests))):
            out[key] = _TooFew(q, int(requests))
    return out


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise inputs.missing(path)
    return path


def _read(path: Path, key: str | None = None) -> list[dict]:
    _existing(path)
    if path.suffix == ".parquet":
        return pd.read_parquet(path).to_dict(orient="records")
    if path.suffix == ".json":
        records = json.loads(path.read_text())
        for part in key.split(".") if key else ():
            records = records.get(part) if isinstance(records, dict) else None
        if not isinstance(records, list):
            raise KqbenchError(f"{path}{f' at {key!r}' if key else ''} is not a JSON list of records")
        return records
    return pd.read_csv(path, keep_default_na=False, na_values=[""]).to_dict(orient="records")


def _name(key) -> str:
    """A key as a template can name it: each run of characters a Python name cannot hold made one `_`
    (`kube-apiserver` -> `kube_apiserver`, `wall @ implementation=kueue` -> `wall_implementation_kueue`)."""
    return _NOT_A_NAME.sub("_", str(key)).strip("_")


def _flat(record: dict | list, prefix: str = "") -> dict:
    """Nested keys joined by `_`, list items by their index: processes.kube-apiserver.cpu_seconds ->
    processes_kube_apiserver_cpu_seconds, rows[2].pods -> rows_2_pods."""
    out = {}
    for key, value in record.items() if isinstance(record, dict) else enumerate(record):
        name = prefix + _name(key)
        if isinstance(value, (dict, list)):
            out |= _flat(value, name + "_")
        else:
            out[name] = value
    return out


def _keyed(path: Path, key: list[str], value: str) -> dict:
    """A table file as one document: each record's value column under its key columns' values joined
    (key [implementation, metric] -> `reference_wall_seconds`)."""
    document = {}
    for record in _read(path):
        if missing := [c for c in [*key, value] if c not in record]:
            raise KqbenchError(f"{path} has no column {', '.join(missing)} (has: {', '.join(record)})")
        name = "_".join(_name(record[c]) for c in key)
        if name in document:
            raise KqbenchError(f"{path}: two records are {name!r}; name more key columns ({', '.join(record)})")
        document[name] = record[value]
    return document


def _value(node: ast.AST, row: dict):
    if isinstance(node, ast.Expression):
        return _value(node.body, row)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in row:
            near = [name for name in row if node.id.split("_")[0] in name][:12] or list(row)[:12]
            raise KqbenchError(f"no column {node.id!r} ({len(row)} columns, e.g. {', '.join(near)})")
        value = row[node.id]
        if isinstance(value, _TooFew):
            raise _Missing(str(value))
        if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
            raise _Missing
        return value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left, row), _value(node.right, row))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_value(node.operand, row)
    raise KqbenchError(f"only column names, numbers and + - * / // in a field (got {ast.unparse(node)!r})")


def cell(template: str, row: dict) -> str:
    """The template filled from one row; `-` when a field it names has no value there."""
    out = []
    try:
        for text, field, spec, conversion in string.Formatter().parse(template):
            out.append(text)
            if field is None:
                continue
            if conversion:
                raise KqbenchError(f"no !{conversion} conversions in a field ({template!r})")
            if field in row:  # a column by name, also one Python would not parse (`class`)
                tree: ast.AST = ast.Name(id=field)
            else:
                try:
                    tree = ast.parse(field, mode="eval")
                except SyntaxError:
                    raise KqbenchError(f"field {field!r} is not an expression") from None
            out.append(format(_value(tree, row), spec or ""))
    except _Missing as missing:
        return str(missing) or "-"
    except (TypeError, ValueError) as error:
        raise KqbenchError(f"template {template!r}: {error}") from None
    return "".join(out)


def rows(spec: dict, folder: Path) -> str:
    """One line per record of the file, one column per template."""
    if "files" in spec:  # one record per JSON document, nested keys flattened, `label` its name in the spec
        records = [{**_flat(json.loads(_existing(folder / name).read_text())), "label": label}
                   for label, name in spec["files"].items()]
        names = {key for record in records for key in record}
        records = [{name: record.get(name) for name in sorted(names)} for record in records]
    else:
        records = _read(folder / spec["file"], spec.get("records"))
    for column, values in (spec.get("only") or {}).items():
        kept = [r for r in records if r.get(column) in values]
        if missing := set(values) - {r.get(column) for r in kept}:
            raise KqbenchError(f"no record with {column} {', '.join(map(str, sorted(missing)))} in {spec['file']}")
        records = sorted(kept, key=lambda r: values.index(r[column]))
    columns: dict[str, str] = spec["columns"]
    records = [_held_back(r) for r in records]
    return markdown.table(list(columns), [[cell(t, r) for t in columns.values()] for r in records])


def _is_pyperf(document) -> bool:
    return isinstance(document, dict) and {"benchmarks", "metadata", "version"} <= set(document)


def record(spec: dict, folder: Path) -> str:
    """A table about a few documents, a line per figure: `files: {prefix: file}` (each JSON document's
    nested keys flattened under its prefix: `main_admissions_per_second`; a table file as
    `{file: F, key: [columns], value: column}`: `prefix_<key values>`), `header: [...]`, and `lines:`
    a list of rows, every cell a template over all the documents' keys (plain text stays as it is)."""
    keys: dict = {}
    for prefix, name in spec["files"].items():
        if isinstance(name, dict):
            document = _keyed(folder / name["file"], list(name["key"]), name["value"])
        else:
            document = json.loads(_existing(folder / name).read_text())
        if _is_pyperf(document):  # a pyperf suite: each benchmark's mean in seconds, by its name
            document = {b.get_name(): b.mean() for b in pyperf.BenchmarkSuite.load(str(folder / name)).get_benchmarks()}
        keys |= _flat(document, f"{prefix}_")
    keys = _held_back(keys)
    header = list(spec["header"])
    for line in spec["lines"]:
        if len(line) != len(header):
            raise KqbenchError(f"a line of {len(line)} cells under a header of {len(header)}: {line[:2]}... "
                               "(a comma in an unquoted YAML cell splits it)")
    return markdown.table(header, [[cell(str(t), keys) for t in line] for line in spec["lines"]])
