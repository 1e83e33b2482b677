"""report.html from one or more run folders: self-contained (PNG figures base64-embedded, no scripts,
no links), plus perfdata.json and junit.xml written next to it.

Top to bottom it answers what a reader looks for first: the verdict per question, the side-by-side
table, the drivers' sections, figures, the SLO checks (failures first), the cases and the census.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from pathlib import Path

import jinja2
import markupsafe
import pandas as pd

from harness.drivers import contract
from harness.errors import KqbenchError
from harness.reporting import exporting, historysection, loading, palettes, pivoting, plotting, slochecks, verdicts

TEMPLATE = "report.html.j2"


def _environment() -> jinja2.Environment:
    # autoescape: run ids, scenario names and errors are text, never markup
    return jinja2.Environment(loader=jinja2.PackageLoader("harness.reporting", "templates"), autoescape=True,
                              undefined=jinja2.StrictUndefined)


def _table(frame: pd.DataFrame | None, empty: str = plotting.NOT_MEASURED) -> markupsafe.Markup:
    if frame is None or frame.empty:
        return markupsafe.Markup("<p class='muted'>{}</p>").format(empty)
    # pandas escapes every cell (escape=True): the table is markup we made; a wide one scrolls in its box
    html = frame.to_html(index=False, escape=True, classes="data", border=0, na_rep="–", float_format=lambda v: f"{v:.4g}")
    return markupsafe.Markup("<div class='scroll'>{}</div>").format(markupsafe.Markup(html))


CENSUS_TOP = 12


def census_top(census: pd.DataFrame | None, cases: pd.DataFrame) -> pd.DataFrame | None:
    """KiB stored per resource (rows, the largest first) and design (columns): the census at a glance."""
    if census is None or census.empty:
        return None
    frame = census.merge(cases[["id", "column"]], left_on="case", right_on="id")
    wide = frame.pivot_table(index="resource", columns="column", values="total_bytes", aggfunc="max")
    wide = wide.reindex(columns=[c for c in dict.fromkeys(cases["column"]) if c in wide.columns])
    top = wide.max(axis=1).sort_values(ascending=False).index[:CENSUS_TOP]
    wide = (wide.loc[top] / 1024).round(1).rename_axis(index="resource (KiB stored)", columns=None)
    return wide.reset_index()


def colours_of(pivot: pivoting.Pivot) -> dict[str, str]:
    return palettes.colours([(c.label, c.strategy) for c in pivot.columns])


def analyse(loaded: loading.Loaded) -> tuple[pivoting.Pivot, list[verdicts.Answer], list[contract.Question]]:
    """The pivot of the runs (sample counts from their tables) and the verdicts read from it."""
    asked = verdicts.questions(loaded.drivers)
    pivot = pivoting.build(loaded.views, loading.request_counts(loaded.tables, loaded.cases, loaded.drivers),
                           verdicts.metrics(asked))
    answers, unanswered = verdicts.answer(pivot, asked)
    return pivot, answers, unanswered


def load(folders: list[Path], drivers: Iterable[contract.Driver]) -> loading.Loaded:
    """The run folders, read for a report of `drivers` (the registry's, handed down by the CLI or the runner)."""
    if not folders:
        raise KqbenchError("give at least one run folder")
    return loading.load([Path(f) for f in folders], drivers)


def pivot_of(folders: list[Path], drivers: Iterable[contract.Driver]) -> pivoting.Pivot:
    """The side-by-side table of run folders (what the terminal prints)."""
    return analyse(load(folders, drivers))[0]


def render(folders: list[Path], out: Path, drivers: Iterable[contract.Driver], history_dir: Path | None = None) -> Path:
    """Write out (report.html), out's perfdata.json and junit.xml; returns out."""
    return write(load(folders, drivers), out, history_dir)


def write(loaded: loading.Loaded, out: Path, history_dir: Path | None = None) -> Path:
    """The report of loaded runs: out (report.html), out's perfdata.json and junit.xml; returns out.
    `history_dir` (one scenario's nightly history) adds the history section."""
    pivot, answers, unanswered = analyse(loaded)
    cases = loaded.cases.assign(column=loaded.cases["key"].map(lambda key: pivot.labels.get(key, key)))
    colours = colours_of(pivot)
    tables = loaded.tables
    shown = sorted((*plotting.FIGURES, *(f for driver in loaded.drivers for f in driver.figures())),
                   key=lambda figure: figure.place)
    drawn = [(figure.title, figure.draw(tables, cases, colours), figure.wide) for figure in shown]
    figures = [(title, png, wide) for title, png, wide in drawn if png is not None]
    undrawn = [title for title, png, _ in drawn if png is None]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sections = []
    records = loaded.records
    context = contract.ReportContext(out_dir=out.parent, cpus=records[0].machine.get("cpus", "?") if records else "?")
    for driver in loaded.drivers:  # a driver's section is None unless the run has its tables
        section = driver.report(tables, context)
        if section is not None:
            sections.append(section.html)
            figures.extend((title, png, True) for title, png in section.figures)
    if history_dir is not None:
        section = historysection.section(history_dir)
        sections.append(section.html)
        figures.extend((title, png, True) for title, png in section.figures)
    slo = slochecks.judge(tables.get("slo"), dict(zip(cases["id"], cases["column"])))
    out.write_text(page(records, cases, pivot, answers, unanswered, colours, figures, slo, tables.get("census"),
                        sections, census_top(tables.get("census"), cases), undrawn,
                        verdicts.metrics(verdicts.questions(loaded.drivers))))
    run_id = "+".join(r.run_id for r in records)
    (out.parent / "perfdata.json").write_text(json.dumps(exporting.perfdata(tables, run_id, loaded.drivers), indent=1))
    (out.parent / "junit.xml").write_bytes(exporting.junit(tables, run_id))
    return out


def page(records, cases: pd.DataFrame, pivot: pivoting.Pivot, answers, unanswered, colours, figures,
         slo: slochecks.SloView | None, census: pd.DataFrame | None, sections=(),
         census_summary: pd.DataFrame | None = None, undrawn=(), question_metrics=()) -> str:
    """The HTML page; `sections` are extra pre-rendered HTML blocks (drivers' sections, which escape their own)."""
    unfinished = cases[cases["status"] != "ok"].to_dict("records") if not cases.empty else []
    title = " + ".join(f"{r.scenario_name} ({r.run_id})" for r in records)
    return _environment().get_template(TEMPLATE).render(
        title=title, records=records, unfinished=unfinished, answers=answers,
        unanswered=[q.title for q in unanswered], caveats=verdicts.caveats(answers), pivot=pivot, colours=colours,
        question_metrics=set(question_metrics), evidence=verdicts.evidence, ratio=pivoting.ratio_text,
        number=pivoting.number, sections=[markupsafe.Markup(section) for section in sections],
        figures=[(t, base64.b64encode(png).decode(), wide) for t, png, wide in figures], slo=slo, table=_table,
        cases=_table(cases.drop(columns=["key"])), census=_table(census), census_top=_table(census_summary), census_rows=CENSUS_TOP, undrawn=undrawn,
        not_measured=plotting.NOT_MEASURED)
