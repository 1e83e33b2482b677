"""Every README's tables of figures made again from the committed files: the list of table builders,
and which READMEs there are (the top-level one, the docs/ pages and the results folders')."""

from __future__ import annotations

from pathlib import Path

from harness.readmes import (agreementtables, baselinetables, blocks, bringuptables, capacitytables, clustertables,
                             evictiontables, faulttables, gatetables, jobstables, pyperftables, rangespectables,
                             rowtables)

BUILDERS: dict[str, blocks.Builder] = {
    "agreement-pairs": agreementtables.pairs,
    "bringup-records": bringuptables.records,
    "capacity-breaks": capacitytables.breaks,
    "capacity-spread": capacitytables.spread,
    "capacity-steps": capacitytables.steps,
    "faults": faulttables.faults,
    "gate-kinds": gatetables.kinds,
    "gate-rates": gatetables.rates,
    "gate-runs": gatetables.runs,
    "jobs-cases": jobstables.cases,
    "kueue-baseline": baselinetables.cases,
    "kueue-evictions": evictiontables.evictions,
    "kueue-rangespec": rangespectables.bounds,
    "pyperf-pairs": pyperftables.pairs,
    "record": rowtables.record,
    "rows": rowtables.rows,
    "scheduler-cluster": clustertables.cases,
}
"""Table name (the block's `<!-- table: NAME`) -> its builder."""


def readmes(root: Path) -> list[Path]:
    """README.md at the top of the repository, then docs/*.md, then README.md under results/ (not results/runs/,
    the git-ignored outputs), each group sorted."""
    docs = sorted((root / "docs").glob("*.md"))
    found = sorted(p for p in (root / "results").rglob("README.md") if (root / "results" / "runs") not in p.parents)
    return [p for p in [root / "README.md", *docs, *found] if p.is_file()]


def name_of(path: Path, root: Path) -> str:
    """The README as messages name it: under the repository by its relative path, elsewhere by its own."""
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def render_file(path: Path, root: Path) -> str:
    """The README's text with every table made again from its files."""
    return blocks.render(path.read_text(), name_of(path, root), BUILDERS, path.parent)
