"""README tables of a Kueue rangespec.yaml (its thresholds and the CI means its comments give), read by
the kueue-baseline driver's own parser, so the README states what the runs are judged by.

Spec of a `kueue-rangespec` block (paths relative to the README):

    file: kueue-v0.19.2-large-scale-rangespec.yaml     # a copy of the module's file, unchanged
    header: [figure, Kueue's mean, threshold]
    rows:                                             # a bound's figure name -> its cells, each a template
      wall_seconds: [wall, "{average:,.0f} s", "{bound} {limit:,.0f} s"]

A row's templates see one bound: `average` (missing when Kueue's comment gives none), `limit` and
`bound` (`<=` for an upper limit, `>=` for a lower one), in the driver's units (s, %).
"""

from __future__ import annotations

from pathlib import Path

from harness.drivers.kueuebaseline import rangespecs
from harness.errors import KqbenchError
from harness.readmes import inputs, markdown, rowtables


def bounds(spec: dict, folder: Path) -> str:
    """One line per named bound of the rangespec, in the spec's order."""
    path = folder / spec["file"]
    if not path.is_file():
        raise inputs.missing(path)
    found = {b.metric: b for b in rangespecs.parse(path.read_text())}
    lines = []
    for metric, templates in spec["rows"].items():
        if metric not in found:
            raise KqbenchError(f"{path} has no bound {metric!r} (has: {', '.join(found)})")
        bound = found[metric]
        fields = {"average": bound.average, "limit": bound.limit, "bound": "<=" if bound.upper else ">="}
        lines.append([rowtables.cell(str(t), fields) for t in templates])
    return markdown.table(list(spec["header"]), lines)
