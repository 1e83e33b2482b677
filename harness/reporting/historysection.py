"""The report's history section: the nightly series of the run's scenario with its change points.

A nightly report answers "is tonight different from last week?" next to tonight's numbers, so the
section sits in the run's report (the same plot `kqbench history` writes as a PNG)."""

from __future__ import annotations

from pathlib import Path

import markupsafe

from harness.drivers import contract
from harness.reporting import historyplot, trends
from harness.results import history

TITLE = "Nightly history: series that changed, change points marked"


def section(folder: Path, patterns: tuple[str, ...] = ()) -> contract.ReportSection:
    """The section for one scenario's history folder (results/history/<scenario>); an empty or
    missing history is said in one line rather than left out, so a reader knows it was asked for."""
    nights = history.load(Path(folder)) if Path(folder).is_dir() else []
    if not nights:
        return contract.ReportSection(markupsafe.Markup("<h2>History</h2><p class='muted'>{} holds no nights yet: "
                                                        "ci/nightly.sh adds one per run.</p>").format(str(folder)))
    found = trends.findings(nights, patterns)
    head = markupsafe.Markup("<h2>History</h2><p>{} nights ({} .. {}), {} series, {} change point(s) "
                             "(PELT over each series; the commits between the last night before a change and its "
                             "first night hold its cause).</p>").format(
        len(nights), nights[0].date[:10], nights[-1].date[:10], len(found.keys), len(found.found))
    items = markupsafe.Markup("").join(markupsafe.Markup("<li>{}</li>").format(trends.describe(c)) for c in found.found)
    body = markupsafe.Markup("<ul>{}</ul>").format(items) if found.found else markupsafe.Markup(
        "<p class='muted'>No series changed level.</p>")
    figures = ((TITLE, historyplot.png(found.plotted, found.found, [n.date for n in nights])),) if found.plotted else ()
    return contract.ReportSection(str(head + body), figures)
