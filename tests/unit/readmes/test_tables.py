"""README tables are what the committed files say: every block re-renders to itself, and a figure
changed by hand is put back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.drivers.kueuebaseline import rangespecs
from harness.readmes import blocks, jobstables, markdown, rendering
from harness.toolchain import building, gomodules

ROOT = Path(__file__).parents[3]
JOBS = ROOT / "results" / "jobs"


@pytest.mark.parametrize("readme", rendering.readmes(ROOT), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_readme_table_is_what_its_files_say(readme):
    assert rendering.render_file(readme, ROOT) == readme.read_text(), \
        f"{readme.relative_to(ROOT)}: a table differs from its files; run `kqbench readme` and read the diff"


def test_the_jobs_readme_has_its_tables_rendered():
    assert len(blocks.find((JOBS / "README.md").read_text(), "README.md")) >= 7


SPEC = f"""<!-- table: jobs-cases
run: {JOBS / "kueue-workers-10k-20261201-070901"}
columns: {{reference: "implementation=reference,r0", Kueue: "implementation=kueue,r0"}}
ratios: [{{label: ours / Kueue, of: [reference, Kueue]}}]
rows: [wall, kueue_job_queue, kcm_job_queue]
-->"""


def test_a_figure_changed_by_hand_is_put_back_and_the_queues_are_each_processs_own(tmp_path):
    rendered = blocks.render(f"# x\n\n{SPEC}\n| stale |\n<!-- end table -->\n\nprose 1,777\n", "x.md",
                             rendering.BUILDERS, tmp_path)
    assert rendered.endswith("<!-- end table -->\n\nprose 1,777\n"), "only the block is rewritten"
    table = rendered.split("-->\n", 1)[1].split("\n<!-- end table -->")[0].split("\n")
    assert table[0] == "| | reference | Kueue | ours / Kueue |"
    assert table[2] == "| wall | 219 s | 398 s | 0.55 |"
    # Kueue's job queue alone (1,725), not summed with kube-controller-manager's (52): 1,777 was the old figure
    assert table[3] == "| Kueue's `job` work queue: largest backlog, time in queue p50 / p99 | | 1,725, 36.0 / 98.7 s | |"
    assert table[4] == "| kube-controller-manager's `job` queue: largest backlog, wait p99 | 150, 7.0 s | 52, 0.93 s | |"
    assert blocks.render(rendered.replace("398 s", "390 s"), "x.md", rendering.BUILDERS, tmp_path) == rendered


@pytest.mark.parametrize("text, message", [
    ("<!-- table: nope\n-->\n<!-- end table -->\n", "x.md:1: no table named 'nope'"),
    ("a\n<!-- table: jobs-cases\nrun: x\n-->\n| |\n", "x.md:2: table 'jobs-cases' has no `-->` or no `<!-- end table -->`"),
    ("<!-- end table -->\n", "x.md:1: an end marker without a table"),
    ("<!-- table: jobs-cases\n[a\n-->\n<!-- end table -->\n", "x.md:1: table 'jobs-cases': its spec is not YAML"),
    ("<!-- table: jobs-cases\nrun: nowhere\ncolumns: {a: r0}\nrows: [wall]\n-->\n<!-- end table -->\n",
     "x.md:1: table 'jobs-cases': "),
    (SPEC.replace("kcm_job_queue", "no_such_row") + "\n<!-- end table -->\n", "unknown row 'no_such_row'"),
    (SPEC.replace("of: [reference, Kueue]", "of: [reference]") + "\n<!-- end table -->\n", "`of` names two of the columns"),
])
def test_a_block_that_cannot_be_rendered_says_where(text, message, tmp_path):
    with pytest.raises(blocks.BlockError) as error:
        blocks.render(text, "x.md", rendering.BUILDERS, tmp_path)
    assert message in str(error.value)


def test_number_formats():
    assert markdown.number(1725.0) == "1,725" and markdown.number(63.93, 1) == "63.9" and markdown.number(None) == "n/a"
    assert [markdown.duration(v) for v in (7e-6, 0.482, 36.04, 1234.5)] == ["7 µs", "0.48 s", "36.0 s", "1,234.5 s"]
    assert markdown.duration(219.4, 0) == "219 s"
    assert [markdown.ratio(v) for v in (0.547, 1.824, 0.003012, 0.0)] == ["0.55", "1.82", "0.003", "0"]
    assert markdown.durations(0.13, 0.94) == "0.13 / 0.94 s" and markdown.durations(7e-6, 0.48) == "7 µs / 0.48 s"
    assert markdown.table(["", "a", "b"], [["x", "", ""]]) == "| | a | b |\n|---|---|---|\n| x | | |"


def test_step_rows_name_their_steps_and_refuse_unknown_ones():
    assert jobstables.row("step:unsuspended:first_running").label == "unsuspended -> first pod Running p50"
    with pytest.raises(Exception, match="step:FROM:TO of created"):
        jobstables.row("step:created:started")


def test_a_topology_row_counts_a_classes_jobs_in_one_domain_and_refuses_a_class_that_required_none():
    run = ROOT / "results" / "tas" / "jobs" / "run"
    case = jobstables.Case(run, "implementation=reference,r0", "jobs")
    assert jobstables.row("topology:class-0").cell(case) == "150 of 150"
    with pytest.raises(Exception, match="no topology figures for class 'class-2'"):
        jobstables.row("topology:class-2").cell(case)


def test_evictions_of_finished_workloads_are_counted_from_the_evictions_table(tmp_path):
    run = ROOT / "results" / "large-scale" / "fair-100cq-paced"
    text = (f"<!-- table: kueue-baseline\nrun: {run}\ncolumns: {{Kueue: implementation=kueue}}\n"
            "rows: [evictions_of_finished]\n-->\n<!-- end table -->")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1].split("\n")
    assert table[2] == ("| evictions of Workloads the generator had already finished (not counted in evictions) "
                        "| 4 (8, 0, 4) |")


def test_a_figure_the_file_cannot_support_is_not_shown_as_one(tmp_path):
    # Kueue at 100k pending: 50 requests per arm, the slowest longer than the 20 s arm
    text = (f"<!-- table: scheduler-cluster\nfolder: {ROOT / 'results' / 'peer' / 'scheduler-cluster-100000'}\n"
            "columns: {ours: reference, Kueue: kueue}\nrows: [page_churn, cores]\n-->\n<!-- end table -->")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1].split("\n")
    assert table == [
        "| | ours | Kueue |", "|---|---|---|",
        "| the same under churn: p99 / pages/s | 86 ms / 1,538 | 24,767 ms (slowest of 50, too few for a p99) / 2.5 |",
        "| scheduler cores during the reads | 0.50-0.64 | not measured: its requests outlasted the arm |",
        "<!-- end table -->"]


def test_cpu_a_file_dropped_is_not_shown(tmp_path):
    import json

    def arm(cores_used):
        dropped = {} if cores_used else {"cores_used_dropped": "dropped: over another window"}
        return {"requests": 500, "per_second": 50.0, "max_ms": 900.0, "cores_used": cores_used, **dropped}

    for stem, cores in (("ours", {"scheduler": 0.5}), ("theirs", None)):
        (tmp_path / f"{stem}.json").write_text(json.dumps({"arms": {"cq_page_idle": arm(cores)}}))
    text = (f"<!-- table: scheduler-cluster\nfolder: {tmp_path}\ncolumns: {{ours: ours, Kueue: theirs}}\n"
            "rows: [cores]\n-->\n<!-- end table -->")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1].split("\n")
    assert table[2] == ("| scheduler cores during the reads | 0.50 "
                        "| not kept: measured over another window than its readings' (`cores_used_dropped`) |")


def test_a_row_template_is_arithmetic_on_the_rows_columns_and_nothing_else():
    from harness.errors import KqbenchError
    from harness.readmes import rowtables

    row = {"arm": "default", "p50_ms": 3200.0, "rss_mb": 2373.05, "gone": float("nan")}
    assert rowtables.cell("{arm}: {p50_ms / 1000:.1f} s, {(rss_mb - 373.05) / 1000:.2f}", row) == "default: 3.2 s, 2.00"
    assert rowtables.cell("{gone:.1f} s", row) == "-"
    with pytest.raises(KqbenchError, match="no column 'p99_ms'"):
        rowtables.cell("{p99_ms}", row)
    with pytest.raises(KqbenchError, match="only column names, numbers"):
        rowtables.cell("{__import__('os').getcwd()}", row)
    with pytest.raises(KqbenchError, match="only column names, numbers"):
        rowtables.cell("{arm.upper}", row)


def test_pyperf_means_and_ratios_read_as_pyperf_prints_them():
    from harness.readmes import pyperftables

    assert [pyperftables.duration(v) for v in (4.62e-4, 2.703e-3, 0.1016, 4.0012e-6, 1.5)] == [
        "462 us", "2.70 ms", "102 ms", "4.00 us", "1.50 s"]
    assert [pyperftables.times(v) for v in (2.02, 18.03, 415.8, 54499.9, 0.44)] == ["2.0x", "18x", "416x", "~54,000x", "0.4x"]


BASELINE = f"""<!-- table: kueue-baseline
run: {ROOT / "results" / "peer" / "kueue-baseline-full-3x-batched"}
columns: {{ours: implementation=reference, Kueue: implementation=kueue}}
ratios: [{{label: ours / Kueue, of: [ours, Kueue]}}]
rows: [wall_seconds, evictions]
-->
<!-- end table -->
"""


def test_kueue_baseline_rows_are_medians_of_the_repeats_with_the_runs_interval(tmp_path):
    rendered = blocks.render(BASELINE, "x.md", rendering.BUILDERS, tmp_path)
    table = rendered.split("-->\n", 1)[1].split("\n<!-- end table -->")[0].split("\n")
    assert table[0] == "| | ours | Kueue | ours / Kueue |"
    assert table[2] == "| wall time (s) | 208 (208, 215, 197) | 189 (187, 189, 196) | 1.12 [0.89, 1.34] |"
    # evictions have no ratio in the run's summary: the medians' ratio, said to be one
    assert table[3] == "| evictions | 2,965 (2,965, 2,841, 3,851) | 34 (34, 18, 39) | 87.2 (of medians) |"
    with pytest.raises(blocks.BlockError, match="unknown row 'walls'"):
        blocks.render(BASELINE.replace("wall_seconds,", "walls,"), "x.md", rendering.BUILDERS, tmp_path)


def test_a_kueue_baseline_column_may_come_from_another_run_and_its_ratio_is_then_of_medians(tmp_path):
    other = tmp_path / "other"
    (other / "tables").mkdir(parents=True)
    (other / "tables" / "kueue_baseline.csv").write_text(
        "case,metric,kqbench\n\"implementation=reference,r0\",wall_seconds,104\n")
    (other / "summary.json").write_text(json.dumps({"metrics": {}}))
    text = BASELINE.replace("{ours: implementation=reference, Kueue: implementation=kueue}",
                            f"{{ours: implementation=reference, bigger: {{run: {other}, point: implementation=reference}}}}")
    text = text.replace("of: [ours, Kueue]", "of: [bigger, ours]").replace("[wall_seconds, evictions]", "[wall_seconds]")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[2] == "| wall time (s) | 208 (208, 215, 197) | 104 | 0.5 (of medians) |"
    nameless = text.replace(f"run: {ROOT / 'results' / 'peer' / 'kueue-baseline-full-3x-batched'}\n", "")
    with pytest.raises(blocks.BlockError, match="column 'ours' names no run"):
        blocks.render(nameless, "x.md", rendering.BUILDERS, tmp_path)


def test_kueue_baseline_rows_name_the_configurations_own_classes(tmp_path):
    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "kueue_baseline.csv").write_text(
        "case,metric,kqbench\n\"implementation=kueue,r0\",time_to_admission_seconds[large-balanced-rack],39.6\n")
    (run / "summary.json").write_text(json.dumps({"metrics": {}}))
    text = BASELINE.replace(str(ROOT / "results" / "peer" / "kueue-baseline-full-3x-batched"), str(run)).replace(
        "[wall_seconds, evictions]", '["time_to_admission_seconds[large-balanced-rack]"]')
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[2] == "| time to admission, large-balanced-rack (s) | n/a | 39.6 | n/a |"
    with pytest.raises(blocks.BlockError, match=r"unknown row 'time_to_admission_seconds\[Large rack\]'"):
        blocks.render(text.replace("large-balanced-rack", "Large rack"), "x.md", rendering.BUILDERS, tmp_path)


def test_kueue_baseline_rows_the_figures_table_lacks_come_from_the_summarys_samples(tmp_path):
    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "kueue_baseline.csv").write_text("case,metric,kqbench\n\"implementation=kueue,r0\",wall_seconds,1\n")
    metrics = {"kueue.scheduler_rss_max_bytes @ implementation=reference": {"samples": [2**20, 3 * 2**20]},
               "kueue.scheduler_rss_max_bytes @ implementation=kueue": {"samples": [4 * 2**20]},
               "kueue.ratio_to_kueue.scheduler_rss_max_bytes @ implementation=reference":
                   {"value": 0.5, "low": 0.25, "high": 0.75},
               "kueue.fairness.jain_index @ implementation=reference": {"samples": [0.98765]}}
    (run / "summary.json").write_text(json.dumps({"metrics": metrics}))
    text = BASELINE.replace(str(ROOT / "results" / "peer" / "kueue-baseline-full-3x-batched"), str(run)).replace(
        "[wall_seconds, evictions]", "[scheduler_rss_max_bytes, fairness.jain_index]")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[2] == "| scheduler RSS (MiB) | 2.00 (1.00, 3.00) | 4.00 | 0.50 [0.25, 0.75] |"
    assert table[3] == "| Jain's index | 0.988 | n/a | n/a |"


def test_kueue_baseline_client_limits_come_from_the_case_records_else_the_runs_backfill(tmp_path):
    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    (run / "tables" / "kueue_baseline.csv").write_text("case,metric,kqbench\n\"implementation=kueue,r0\",wall_seconds,1\n")
    (run / "summary.json").write_text(json.dumps({"metrics": {}}))
    cases = [{"id": "implementation=kueue,r0", "client_limits": {"qps": 50.0, "burst": 100}},
             {"id": "implementation=kueue,r1", "client_limits": {"qps": 50.0, "burst": 100}},
             {"id": "implementation=reference,r0"}]
    (run / "run.json").write_text(json.dumps({"cases": cases}))
    text = BASELINE.replace(str(ROOT / "results" / "peer" / "kueue-baseline-full-3x-batched"), str(run)).replace(
        "[wall_seconds, evictions]", "[client_limits]")

    def row() -> str:
        return blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")[2]

    assert row().startswith("| client limit, QPS / burst | not recorded (benchmarks/scripts/kueuebaseline/client-limits.py")
    assert row().endswith("| 50 / 100 | differ |")
    (run / "client-limits.json").write_text(json.dumps({"cases": {
        "implementation=reference,r0": {"qps": None, "burst": None},
        "implementation=kueue,r0": {"qps": 300.0, "burst": 500}}}))  # the record wins over the backfill
    assert row() == "| client limit, QPS / burst | none | 50 / 100 | differ |"
    cases[2]["client_limits"] = {"qps": 50.0, "burst": 100}
    (run / "run.json").write_text(json.dumps({"cases": cases}))
    assert row() == "| client limit, QPS / burst | 50 / 100 | 50 / 100 | same |"


def test_rows_keep_the_records_asked_for_in_that_order_and_read_keyword_columns(tmp_path):
    (tmp_path / "t.csv").write_text("class,metric,value\nsmall,a,1.5\nlarge,b,2.25\nmedium,c,\n")
    spec = "file: t.csv\nonly: {metric: [c, a]}\ncolumns: {class: '{class}', v: '{value * 2:.1f}'}"
    text = f"<!-- table: rows\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        "| class | v |\n|---|---|\n| medium | - |\n| small | 3.0 |\n<!-- end table -->")
    with pytest.raises(blocks.BlockError, match="no record with metric z"):
        blocks.render(text.replace("[c, a]", "[c, z]"), "x.md", rendering.BUILDERS, tmp_path)


TYPED_TABLES = {
    # README path: (tables typed by hand, why they are not rendered yet)
    "docs/clusters.md": (1, "not figures: backends"),
    "docs/drivers.md": (1, "not figures: drivers"),
    "docs/scenarios-and-gate.md": (1, "not figures: verdicts"),
    "docs/results.md": (1, "not figures: the results store's commands"),
    "results/examples/README.md": (1, "not figures: which report is which"),
    "results/peer/README.md": (1, "not figures: what each figure of the scheduler benchmark measures and how"),
}
"""What is still typed: a new typed table fails the test below (render it from its files instead), and so
does rendering one of these without lowering its count here."""


def _typed_tables(path: Path) -> int:
    import re

    text = path.read_text()
    rendered = {i for b in blocks.find(text, str(path)) for i in range(b.body_start, b.body_end)}
    return sum(1 for i, line in enumerate(text.split("\n"))
               if re.match(r"^\|\s*:?-{3,}", line) and i not in rendered)


def test_no_readme_has_a_typed_table_beyond_the_known_ones():
    found = {str(p.relative_to(ROOT)): _typed_tables(p) for p in rendering.readmes(ROOT)}
    typed = {name: count for name, count in found.items() if count}
    assert typed == {name: count for name, (count, _) in TYPED_TABLES.items()}, \
        ("a README table of figures is written by `kqbench readme` from its files; after rendering one of "
         "the typed tables, lower its count in TYPED_TABLES here")


def test_rows_of_json_documents_name_nested_keys_and_miss_what_a_file_lacks(tmp_path):
    (tmp_path / "a.json").write_text('{"bench": {"ready-s": 4.6}, "processes": {"kube-apiserver": {"cpu": 3.2}}}')
    (tmp_path / "b.json").write_text('{"processes": {"kube-apiserver": {"cpu": 500}}}')
    spec = ("files: {bulk: a.json, POSTs: b.json}\n"
            "columns: {phase: '{label}', ready: '{bench_ready_s:.1f} s', cpu: '{processes_kube_apiserver_cpu:.0f}'}")
    text = f"<!-- table: rows\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        "| phase | ready | cpu |\n|---|---|---|\n| bulk | 4.6 s | 3 |\n| POSTs | - | 500 |\n<!-- end table -->")


def test_a_record_table_fills_each_line_from_documents_under_their_prefixes(tmp_path):
    (tmp_path / "a.json").write_text('{"admissions": {"per_second": 505.4}, "startup_seconds": 7.98}')
    (tmp_path / "b.json").write_text('{"admissions": {"per_second": 474.2}}')
    spec = ("files: {r: a.json, again: b.json}\nheader: [measurement, figure, goal]\n"
            "lines: [[start-up, '{r_startup_seconds:.1f} s', '<= 60 s'],"
            " [admissions, '{r_admissions_per_second:.0f} /s; again {again_admissions_per_second:.0f} /s', '']]")
    text = f"<!-- table: record\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        "| measurement | figure | goal |\n|---|---|---|\n| start-up | 8.0 s | <= 60 s |\n"
        "| admissions | 505 /s; again 474 /s | |\n<!-- end table -->")


def test_agreement_pairs_are_the_runs_cross_and_self_agreement(tmp_path):
    spec = (f"<!-- table: agreement-pairs\nrun: {ROOT / 'results' / 'agreement' / 'random-300'}\n"
            "names: {kueue: Kueue v0.17.0}\n-->\n<!-- end table -->\n")
    table = blocks.render(spec, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[0] == "| pair | decisions | agreeing | rate | cases agreeing entirely |"
    assert table[2].startswith("| reference / Kueue v0.17.0 |")
    assert [line.split(" / itself")[0] for line in table[3:5]] == ["| reference", "| Kueue v0.17.0"]


def test_a_run_of_one_repeat_has_no_self_agreement_rows(tmp_path):
    spec = (f"<!-- table: agreement-pairs\nrun: {ROOT / 'results' / 'agreement' / 'kueue-v0.17.0-admission-race' / 'v0.19.2'}"
            "\n-->\n<!-- end table -->\n")
    table = blocks.render(spec, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[2] == "| reference / kueue | 10 | 10 | 100.00 % | 2 / 2 |"
    assert table[3] == "<!-- end table -->"


def test_a_record_table_reads_summary_keys_list_items_and_table_files_by_their_key_columns(tmp_path):
    (tmp_path / "summary.json").write_text(
        '{"metrics": {"kueue.time_to_admission_seconds[large] @ implementation=kueue": {"value": 19.49}},'
        ' "rows": [{"pods": 1000}, {"pods": 10000}]}')
    (tmp_path / "figures.csv").write_text(
        "implementation,metric,kqbench\nreference,wall_seconds,208.1\nkueue,wall_seconds,189.5\n")
    spec = ("files: {s: summary.json, t: {file: figures.csv, key: [implementation, metric], value: kqbench}}\n"
            "header: [figure, value]\n"
            "lines: [[large, '{s_metrics_kueue_time_to_admission_seconds_large_implementation_kueue_value:.0f} s'],"
            " [pods, '{s_rows_1_pods:,}'], [wall ours / Kueue, '{t_reference_wall_seconds / t_kueue_wall_seconds:.2f}']]")
    text = f"<!-- table: record\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        "| figure | value |\n|---|---|\n| large | 19 s |\n| pods | 10,000 |\n| wall ours / Kueue | 1.10 |\n"
        "<!-- end table -->")
    with pytest.raises(blocks.BlockError, match="a line of 3 cells under a header of 2"):
        blocks.render(text.replace("[pods,", "[pods, x,"), "x.md", rendering.BUILDERS, tmp_path)
    with pytest.raises(blocks.BlockError, match="has no column case"):
        blocks.render(text.replace("key: [implementation", "key: [case"), "x.md", rendering.BUILDERS, tmp_path)
    with pytest.raises(blocks.BlockError, match="two records are 'wall_seconds'"):
        blocks.render(text.replace("key: [implementation, metric]", "key: [metric]"), "x.md", rendering.BUILDERS, tmp_path)


RANGESPEC = """cmd:
  # mean=1179411ms, stdev=13280ms
  maxWallMs: 1_416_000
clusterQueueClassesMinUsage:
  cq: 31.6 # mean=38.64%
"""


def test_a_rangespec_table_is_what_the_drivers_parser_reads_bound_by_bound(tmp_path):
    (tmp_path / "rangespec.yaml").write_text(RANGESPEC)
    spec = ("file: rangespec.yaml\nheader: [figure, mean, threshold]\nrows:\n"
            "  wall_seconds: [wall, '{average:,.0f} s', '{bound} {limit:,.0f} s']\n"
            "  cq_usage_percent: [usage, '{average:.2f} %', '{bound} {limit:.1f} %']")
    text = f"<!-- table: kueue-rangespec\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        "| figure | mean | threshold |\n|---|---|---|\n| wall | 1,179 s | <= 1,416 s |\n"
        "| usage | 38.64 % | >= 31.6 % |\n<!-- end table -->")
    with pytest.raises(blocks.BlockError, match="no bound 'time_to_admission_seconds"):
        blocks.render(text.replace("wall_seconds:", "time_to_admission_seconds[large]:"), "x.md", rendering.BUILDERS,
                      tmp_path)


@pytest.mark.parametrize("version, config, copy", [
    ("v0.19.2", "large-scale", "results/large-scale/kueue-v0.19.2-large-scale-rangespec.yaml"),
    ("v0.17.0", "tas", "results/tas/kueue-v0.17.0-tas-rangespec.yaml")])
def test_a_rangespec_beside_its_readme_is_the_modules(version, config, copy):
    module = building.module_dir(gomodules.KUEUE_MODULE, version) / rangespecs.CONFIGS / config
    if not module.is_dir():
        pytest.skip(f"{module} is not in the Go module cache (kqbench toolchain build fetches it)")
    assert (ROOT / copy).read_text() == (module / "rangespec.yaml").read_text()


def test_a_readme_outside_the_repository_is_rendered_and_named_by_its_own_path(tmp_path):
    from click.testing import CliRunner

    from harness.cli import readme

    (tmp_path / "t.csv").write_text("metric,value\na,1.5\n")
    page = tmp_path / "README.md"
    page.write_text("<!-- table: rows\nfile: t.csv\ncolumns: {v: '{value:.1f}'}\n-->\n<!-- end table -->\n")
    result = CliRunner().invoke(readme.command, [str(page), "--root", str(ROOT)])
    assert result.exit_code == 0 and f"rendered {page}" in result.output
    assert "| 1.5 |" in page.read_text()


def test_kueue_baseline_ratio_is_not_reached_when_a_side_did_not_finish_and_bounds_broken_are_counted(tmp_path):
    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    rows = ["case,metric,kqbench,within_rangespec"]
    for case, complete, wall_ok in (("implementation=reference,r0", 1, True), ("implementation=kueue,r0", 0, False)):
        rows += [f'"{case}",complete,{complete},', f'"{case}",wall_seconds,100,{wall_ok}',
                 f'"{case}",cq_usage_percent,40,False']
    (run / "tables" / "kueue_baseline.csv").write_text("\n".join(rows) + "\n")
    text = BASELINE.replace(str(ROOT / "results" / "peer" / "kueue-baseline-full-3x-batched"), str(run)).replace(
        "[wall_seconds, evictions]", "[wall_seconds, rangespec_failures]")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n", 1)[1].split("\n")
    assert table[2] == "| wall time (s) | 100 | 100 | not reached (Kueue did not finish) |"
    assert table[3] == "| Kueue's rangespec bounds broken | 1 | 2 | not reached (Kueue did not finish) |"


def test_who_preempted_whom_is_rendered_from_the_evictions_table_per_case_of_each_implementation(tmp_path):
    from harness.errors import KqbenchError

    run = ROOT / "results" / "large-scale" / "fair-100cq-paced"
    text = (f"<!-- table: kueue-evictions\nrun: {run}\ncolumns: {{Kueue: kueue}}\n-->\n<!-- end table -->")
    table = blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1].split("\n")
    # Kueue's three cases: 9 evictions in the first (8 of finished Workloads), none in the second, 5 in the third
    assert table[0] == "| reason | preemptor | victim | Kueue |"
    assert table[-2] == "| all | | | 4.7 |"
    with pytest.raises(KqbenchError, match="no case of kueu"):
        blocks.render(text.replace("Kueue: kueue", "Kueue: kueu"), "x.md", rendering.BUILDERS, tmp_path)


def test_a_missing_input_of_a_pushed_run_says_how_to_pull_it(tmp_path):
    from harness.readmes import inputs
    from harness.results import manifests

    run = tmp_path / "run"
    (run / "tables").mkdir(parents=True)
    assert "kqbench results pull" not in str(inputs.missing(run / "tables" / "x.parquet"))
    (run / manifests.FILE_NAME).write_text('{"schema_version": 1, "files": []}')
    message = str(inputs.missing(run / "tables" / "x.parquet", "the rows are counted from it"))
    assert message == (f"{run}/tables/x.parquet does not exist (the rows are counted from it); its run has a "
                       f"store-manifest.json: `kqbench results pull {run}/tables/x.parquet` brings it back from the store")


@pytest.mark.parametrize("requests, cell", [
    (50, "too few samples for a p99 (50 requests)"),   # Kueue at 100k pending: its slowest page, not a p99
    (99, "too few samples for a p99 (99 requests)"),
    (100, "24,767 ms"),
])
def test_a_quantile_is_never_published_from_fewer_requests_than_its_floor(tmp_path, requests, cell):
    (tmp_path / "kueue.json").write_text(json.dumps(
        {"arms": {"cq_page_churn": {"requests": requests, "p99_ms": 24766.79, "max_ms": 24766.79}}}))
    spec = ("files: {k: kueue.json}\nheader: [figure, value, slowest]\n"
            "lines: [[p99, '{k_arms_cq_page_churn_p99_ms:,.0f} ms', "
            "'{k_arms_cq_page_churn_max_ms:,.0f} ms of {k_arms_cq_page_churn_requests}']]")
    text = f"<!-- table: record\n{spec}\n-->\n<!-- end table -->"
    assert blocks.render(text, "x.md", rendering.BUILDERS, tmp_path).split("-->\n")[1] == (
        f"| figure | value | slowest |\n|---|---|---|\n| p99 | {cell} | 24,767 ms of {requests} |\n<!-- end table -->")
    rows = "file: kueue.csv\ncolumns: {p99: '{p99_ms:.0f}'}"
    (tmp_path / "kueue.csv").write_text(f"requests,p99_ms\n{requests},24766.79\n")
    shown = blocks.render(f"<!-- table: rows\n{rows}\n-->\n<!-- end table -->", "x.md", rendering.BUILDERS, tmp_path)
    assert shown.split("-->\n")[1].split("\n")[2] == f"| {cell.replace('24,767 ms', '24767')} |"
