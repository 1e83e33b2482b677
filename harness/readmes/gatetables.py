"""README tables of gate verdicts over many runs (the false-alarm measurement), from the JSON files
`kqbench compare --json` wrote, one per run compared with a baseline.

Spec of a `gate-rates` block (paths relative to the README):

    arms:                                   # column -> the comparisons of that arm's runs
      same code: [same-1/compare.json, same-2/compare.json]
      page cache off: [changed-1/compare.json]

One row for the gate's verdict (runs with any metric `regressed`), then one per metric family (the
metric's name, over its points) that regressed in any run: in how many of the arm's runs it did, and,
in brackets, in how many it was `inconclusive` and none of its points regressed.

Spec of a `gate-runs` block: `runs: {label: compare.json, ...}`; one row per run: the verdict counts and
every regressed metric with its change.

Spec of a `gate-kinds` block: `file: ../../ci/thresholds.yaml` (relative to the README); one row per rule of
the thresholds, in their order: its metric, point and scenario patterns, its kind, its limit, and what it judges on a
machine that has a baseline of its own and on a new one (a kind's only place is that file: the README says
what the gate reads there).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.errors import KqbenchError
from harness.readmes import inputs, markdown
from harness.reporting import comparing


def _document(folder: Path, name: str) -> dict:
    path = folder / name
    if not path.is_file():
        raise inputs.missing(path)
    document = json.loads(path.read_text())
    if "rows" not in document or "counts" not in document:
        raise KqbenchError(f"{path} is not a comparison written by `kqbench compare --json`")
    return document


def _verdicts(document: dict) -> dict[str, set[str]]:
    """Metric family -> the verdicts its points got in one comparison."""
    found: dict[str, set[str]] = {}
    for row in document["rows"]:
        found.setdefault(row["metric"], set()).add(row["verdict"])
    return found


def rates(spec: dict, folder: Path) -> str:
    arms = {label: [_verdicts(_document(folder, name)) for name in names] for label, names in spec["arms"].items()}
    families = sorted({family for runs in arms.values() for run in runs for family, got in run.items()
                       if "regressed" in got})

    def cell(runs: list[dict[str, set[str]]], family: str | None) -> str:
        if family is None:
            regressed = sum(any("regressed" in got for got in run.values()) for run in runs)
            return f"{regressed} / {len(runs)}"
        regressed = sum("regressed" in run.get(family, ()) for run in runs)
        unsure = sum("inconclusive" in run.get(family, ()) and "regressed" not in run.get(family, ()) for run in runs)
        return f"{regressed} / {len(runs)}" + (f" ({unsure} inconclusive)" if unsure else "")

    rows = [["the gate: any metric regressed", *(cell(runs, None) for runs in arms.values())]]
    rows += [[f"`{family}`", *(cell(runs, family) for runs in arms.values())] for family in families]
    return markdown.table(["runs with a regression", *arms], rows)


def runs(spec: dict, folder: Path) -> str:
    rows = []
    for label, name in spec["runs"].items():
        document = _document(folder, name)
        counts = document["counts"]
        regressed = [f"`{row['metric']}` @ {row['point']} {row['change'] * 100:+.0f}%"
                     for row in document["rows"] if row["verdict"] == "regressed"]
        rows.append([label, *(str(counts.get(v, 0)) for v in ("regressed", "inconclusive", "same")),
                     "; ".join(regressed) or "-"])
    return markdown.table(["run", "regressed", "inconclusive", "same", "what regressed"], rows)


_ON_A_NEW_MACHINE = {comparing.Kind.COUNT: "gated, against the newest baseline of any machine",
                     comparing.Kind.TIMING: "unchecked"}


def kinds(spec: dict, folder: Path) -> str:
    """One row per threshold rule: which metrics the nightly gate judges on a known and on a new machine."""
    path = folder / spec["file"]
    if not path.is_file():
        raise inputs.missing(path)
    rows = []
    for rule in comparing.load_thresholds(path).thresholds:
        limit = f"+{rule.max_regression:.0%}" if rule.max_absolute is None else f"+{rule.max_absolute:g} absolute"
        point = "" if rule.point == "*" else f" @ `{rule.point}`"
        scenario = "" if rule.scenario == "*" else f" in `{rule.scenario}`"
        rows.append([f"`{rule.metric}`{point}{scenario}", rule.kind.value, limit, "gated",
                     _ON_A_NEW_MACHINE[rule.kind]])
    return markdown.table(["metric (threshold rule)", "kind", "limit", "a machine with its own baseline",
                           "a new machine (first night)"], rows)
