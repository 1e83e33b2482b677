"""report.html from one or more run folders: self-contained (PNG figures base64-embedded), plus
perfdata.json and junit.xml written next to it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import jinja2
import markupsafe
import pandas as pd

from harness.drivers import registry
from harness.errors import KqbenchError
from harness.reporting import exporting, plotting
from harness.results import runs, summaries, tables as tidy


def load_runs(folders: list[Path]) -> tuple[list[runs.RunRecord], dict[str, pd.DataFrame], pd.DataFrame]:
    """run.json of each folder, their tables concatenated (case ids prefixed by run id when several)."""
    records, parts, cases = [], {}, []
    for folder in folders:
        record = runs.read_run(Path(folder))
        records.append(record)
        prefix = f"{record.run_id}/" if len(folders) > 1 else ""
        for name, frame in tidy.read(Path(folder)).items():
            if "case" in frame.columns:
                frame = frame.assign(case=prefix + frame["case"].astype(str))
            parts.setdefault(name, []).append(frame)
        # record.scenario is the resolved scenario as dumped by the runner: every field is there
        strategy_default = record.scenario["scheduler"]["strategy"]
        pending_default = next((p["pending"] for p in record.scenario["phases"].values() if p["kind"] == "fill"), 0)
        for case in record.cases:
            cases.append({"id": prefix + case.id, "strategy": case.params.get("scheduler.strategy", strategy_default),
                          "pending": case.params.get("phases.fill.pending", pending_default) or 0,
                          "status": case.status, "error": case.error})
    tables = {name: pd.concat(frames, ignore_index=True) for name, frames in parts.items()}
    return records, tables, pd.DataFrame(cases, columns=["id", "strategy", "pending", "status", "error"])


def render(folders: list[Path], out: Path) -> Path:
    """Write out (report.html), out's perfdata.json and junit.xml; returns out."""
    if not folders:
        raise KqbenchError("give at least one run folder")
    records, tables, cases = load_runs([Path(f) for f in folders])
    run_id = "+".join(r.run_id for r in records)
    figures = [
        ("Write QPS by strategy vs pending", plotting.write_qps(tables, cases)),
        ("Bystander latency over time", plotting.bystander_latency(tables)),
        ("Position query latency vs pending", plotting.query_latency(tables, cases)),
        ("Largest object size vs pending", plotting.largest_object(tables, cases)),
        ("apiserver / etcd RSS over time", plotting.rss_over_time(tables)),
    ]
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    key_numbers = []
    for folder in folders:
        if (Path(folder) / "summary.json").is_file():
            key_numbers.append(summary_frame(summaries.read(Path(folder))).assign(run=Path(folder).name))
    summary_table = pd.concat(key_numbers, ignore_index=True) if key_numbers else None
    sections = []
    context = registry.ReportContext(out_dir=out.parent,
                                     cpus=records[0].machine.get("cpus", "?") if records else "?")
    for driver in registry.drivers():  # a driver's section is None unless the run has its tables
        section = driver.report(tables, context)
        if section is not None:
            sections.append(section.html)
            figures.extend(section.figures)
    out.write_text(page(records, cases, tables, figures, summary_table, sections))
    (out.parent / "perfdata.json").write_text(json.dumps(exporting.perfdata(tables, run_id), indent=1))
    (out.parent / "junit.xml").write_bytes(exporting.junit(tables, run_id))
    return out


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kqbench report</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
figure { display: inline-block; margin: 0.5em; vertical-align: top; }
figcaption { text-align: center; font-size: 0.9em; color: #555; }
table.data { border-collapse: collapse; font-size: 0.85em; }
table.data td, table.data th { border: 1px solid #ccc; padding: 2px 6px; }
.muted { color: #888; }
</style></head><body>
<h1>kqbench report</h1>
<ul>
{%- for r in records %}<li><b>{{ r.run_id }}</b>: scenario <code>{{ r.scenario_name }}</code>, status {{ r.status }},
 {{ r.started_at }} → {{ r.ended_at }}, git {{ r.git_sha[:12] }}, {{ r.machine.get("cpus", "?") }} CPUs</li>{% endfor -%}
</ul>
<h2>Cases</h2>{{ cases }}
<h2>Key numbers</h2>{{ key_numbers }}
{% for section in sections %}{{ section }}{% endfor %}
<h2>Figures</h2>
{%- for title, png in figures %}<figure><img alt="{{ title }}" src="data:image/png;base64,{{ png }}">
<figcaption>{{ title }}</figcaption></figure>{% endfor %}
<h2>SLO checks</h2>{{ slo }}
<h2>etcd census</h2>{{ census }}
</body></html>
"""
"""The page (jinja2, autoescaped: run ids, scenario names and errors are text, never markup)."""


def _table(frame: pd.DataFrame | None, empty: str = plotting.NOT_MEASURED) -> markupsafe.Markup:
    if frame is None or frame.empty:
        return markupsafe.Markup("<p class='muted'>{}</p>").format(empty)
    # pandas escapes every cell (escape=True): the table is markup we made
    return markupsafe.Markup(frame.to_html(index=False, escape=True, classes="data", float_format=lambda v: f"{v:.4g}"))


def page(records: list[runs.RunRecord], cases: pd.DataFrame, tables: dict[str, pd.DataFrame], figures,
         summary_table: pd.DataFrame | None = None, sections: list[str] = ()) -> str:
    """The HTML page; `sections` are extra pre-rendered HTML blocks (drivers' sections) after the key numbers."""
    slo = tables.get("slo")
    slo_view = None
    if slo is not None and not slo.empty:
        slo_view = slo[["case", "phase", "verb", "resource", "subresource", "scope", "count", "p99_seconds",
                        "threshold_seconds", "passed"]].assign(passed=slo["passed"].map(lambda p: "PASS" if p else "FAIL"))
    environment = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    return environment.from_string(PAGE).render(
        records=records, cases=_table(cases), key_numbers=_table(summary_table),
        sections=[markupsafe.Markup(section) for section in sections],  # the drivers escape their own
        figures=[(title, base64.b64encode(png).decode()) for title, png in figures],
        slo=_table(slo_view), census=_table(tables.get("census")))


def summary_frame(summary: summaries.Summary) -> pd.DataFrame:
    return pd.DataFrame([{"metric": e.metric, "point": e.point, "value": e.value, "unit": e.unit}
                         for e in summary.entries.values()])
