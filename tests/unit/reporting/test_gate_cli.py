"""`kqbench compare` and `kqbench history` on small synthetic files: verdicts with intervals, exit
codes, version-1 baselines, change points with commit ranges, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.results import history, summaries
from tests.unit import clirunning

ROOT = Path(__file__).resolve().parents[3]
THRESHOLDS = ROOT / "ci" / "thresholds.yaml"


_kqbench = clirunning.kqbench


def _summary_file(path: Path, entries: dict[str, tuple], version: int = summaries.SCHEMA_VERSION) -> Path:
    """entries: metric -> (value, low, high, n, better)."""
    summary = summaries.Summary("run", "quick", "ok")
    for metric, (value, low, high, n, better) in entries.items():
        entry = summaries.Entry(metric, "strategy=x", value, "ms", better, [value], low, high, n)
        summary.entries[entry.key] = entry
    data = summary.to_dict()
    data["schema_version"] = version
    if version == 1:
        for metric in data["metrics"].values():
            for name in ("low", "high", "n"):
                metric.pop(name)
    path.write_text(json.dumps(data))
    return path


def test_compare_regressed_prints_interval_and_exits_1(tmp_path, monkeypatch, capsys):
    base = _summary_file(tmp_path / "base.json", {"load.bystander_p99_ms": (40.0, 38.0, 42.0, 2000, "lower"),
                                                  "apiserver.write_qps[churn]": (40.0, 39.0, 41.0, 3, "lower")})
    new = _summary_file(tmp_path / "new.json", {"load.bystander_p99_ms": (100.0, 95.0, 105.0, 2000, "lower"),
                                                "apiserver.write_qps[churn]": (41.0, 39.5, 42.5, 3, "lower")})
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--thresholds", str(THRESHOLDS))
    assert code == 1 and "FAIL: 1 metric(s) regressed" in err
    line = next(l for l in out.splitlines() if "load.bystander_p99_ms" in l)
    assert "regressed" in line and "[95, 105] n=2000" in line and "+150.0% [" in line
    assert "same" in next(l for l in out.splitlines() if "apiserver.write_qps[churn]" in l)  # not eaten as markup


def test_compare_noise_beyond_threshold_is_inconclusive_and_passes(tmp_path, monkeypatch, capsys):
    base = _summary_file(tmp_path / "base.json", {"load.bystander_p99_ms": (10.0, 5.0, 60.0, 600, "lower")})
    new = _summary_file(tmp_path / "new.json", {"load.bystander_p99_ms": (53.0, 6.0, 80.0, 600, "lower")})
    code, out, _ = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--thresholds", str(THRESHOLDS))
    assert code == 0 and "inconclusive" in out and "not significant" in out and "PASS" in out


def test_compare_json_holds_each_verdicts_count_and_every_row(tmp_path, monkeypatch, capsys):
    base = _summary_file(tmp_path / "base.json", {"load.bystander_p99_ms": (40.0, 38.0, 42.0, 2000, "lower"),
                                                  "apiserver.write_qps[churn]": (40.0, 39.0, 41.0, 3, "lower")})
    new = _summary_file(tmp_path / "new.json", {"load.bystander_p99_ms": (100.0, 95.0, 105.0, 2000, "lower")})
    out = tmp_path / "verdicts.json"
    code, _, _ = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--thresholds", str(THRESHOLDS),
                          "--json", str(out))
    document = json.loads(out.read_text())
    assert code == 1 and document["schema_version"] == 1 and not document["passed"]
    assert {k: v for k, v in document["counts"].items() if v} == {"regressed": 1, "missing": 1}
    assert len(document["counts"]) == 7, "every verdict named, 0 when none"
    row = next(r for r in document["rows"] if r["verdict"] == "regressed")
    assert (row["metric"], row["new_interval"], row["new_n"]) == ("load.bystander_p99_ms", [95.0, 105.0], 2000)


def test_compare_with_a_version_1_baseline_is_threshold_only_and_says_so(tmp_path, monkeypatch, capsys):
    base = _summary_file(tmp_path / "base.json", {"load.bystander_p99_ms": (10.0, None, None, None, "lower")}, version=1)
    new = _summary_file(tmp_path / "new.json", {"load.bystander_p99_ms": (12.0, 11.0, 13.0, 2000, "lower")})
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--thresholds", str(THRESHOLDS))
    assert code == 0 and "same" in out and "has no intervals (summary version 1)" in err
    new = _summary_file(tmp_path / "new.json", {"load.bystander_p99_ms": (30.0, 29.0, 31.0, 2000, "lower")})
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--thresholds", str(THRESHOLDS))
    assert code == 1 and "regressed" in out and "threshold only" in out


def test_compare_the_committed_baseline_with_itself_passes(monkeypatch, capsys):
    baseline = ROOT / "results" / "baselines" / "quick.summary.json"
    code, out, _ = _kqbench(monkeypatch, capsys, "compare", str(baseline), str(baseline), "--thresholds", str(THRESHOLDS))
    assert code == 0 and "PASS: no metric regressed" in out
    assert not any(" regressed " in line for line in out.splitlines() if "│" in line)


def test_compare_missing_file_is_one_line(monkeypatch, capsys, tmp_path):
    code, _, err = _kqbench(monkeypatch, capsys, "compare", str(tmp_path / "nope.json"), str(tmp_path))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "does not exist" in err


def _history(folder: Path, values: list[float]) -> Path:
    scenario = folder / "quick"
    scenario.mkdir(parents=True)
    for night, value in enumerate(values):
        record = history.Night(f"2026-11-{night + 1:02d}T03:17:00+00:00", f"{night:02d}" + "a" * 38, f"run{night}",
                               "quick", {"load.bystander_p99_ms @ strategy=x": history.Point(value, value - 1, value + 1, 900),
                                         "apiserver.write_qps[churn] @ strategy=x": history.Point(40.0 + night % 2)})
        (scenario / history.file_name(record)).write_text(json.dumps(record.to_dict()))
    return folder


def test_history_finds_the_step_with_its_commit_range_and_plots(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(5)
    values = list(rng.normal(30.0, 1.5, 30) + np.r_[np.zeros(20), np.full(10, 6.0)])
    folder = _history(tmp_path / "history", values)
    plot = tmp_path / "h.png"
    code, out, err = _kqbench(monkeypatch, capsys, "history", "load.*_p99_ms", "--dir", str(folder), "--plot", str(plot))
    assert code == 0, err
    assert "30 nights of quick" in out and "1 change point(s)" in out
    assert "from night 20 (2026-11-21)" in out and "commits 19aaaaaaaaaa..20aaaaaaaaaa" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_history_unknown_metric_lists_the_known_ones(tmp_path, monkeypatch, capsys):
    folder = _history(tmp_path / "history", [1.0] * 8)
    code, _, err = _kqbench(monkeypatch, capsys, "history", "load.nope", "--dir", str(folder),
                            "--plot", str(tmp_path / "h.png"))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "unknown metric 'load.nope'" in err and "apiserver.write_qps[churn], load.bystander_p99_ms" in err


def test_history_missing_folder_is_one_line(tmp_path, monkeypatch, capsys):
    code, _, err = _kqbench(monkeypatch, capsys, "history", "--dir", str(tmp_path / "none"))
    assert code == 2 and "does not exist" in err and len(err.strip().splitlines()) == 1


def test_history_record_writes_one_small_file_per_night(tmp_path, monkeypatch, capsys):
    from harness.results import runs

    run = tmp_path / "run1"
    run.mkdir()
    runs.write_run(run, runs.RunRecord(run_id="run1", scenario_name="quick", scenario_source="quick", scenario={},
                                       overrides=[], status="ok", git_sha="abc123def4567890",
                                       started_at="2026-11-30T03:17:00+00:00"))
    _summary_file(run / "summary.json", {"load.bystander_p99_ms": (40.0, 38.0, 42.0, 2000, "lower")})
    code, out, err = _kqbench(monkeypatch, capsys, "history", "--record", str(run), "--dir", str(tmp_path / "h"))
    assert code == 0, err
    written = tmp_path / "h" / "quick" / "20261130-abc123def456.json"
    assert f"recorded: {written}" in out
    [night] = history.load(tmp_path / "h" / "quick")
    assert night.git_sha == "abc123def4567890"
    assert night.metrics["load.bystander_p99_ms @ strategy=x"] == history.Point(40.0, 38.0, 42.0, 2000)


def test_report_with_history_shows_the_change_points_and_their_plot(tmp_path, monkeypatch, capsys):
    from tests.unit.reporting import builders

    rng = np.random.default_rng(5)
    folder = _history(tmp_path / "history", list(rng.normal(30.0, 1.5, 30) + np.r_[np.zeros(20), np.full(10, 6.0)]))
    run = builders.RunBuilder().write(tmp_path / "run")
    code, _, err = _kqbench(monkeypatch, capsys, "report", str(run), "--out", str(tmp_path / "plain.html"), "--quiet")
    assert code == 0, err
    code, _, err = _kqbench(monkeypatch, capsys, "report", str(run), "--history", str(folder / "quick"), "--quiet")
    assert code == 0, err
    page, plain = (run / "report.html").read_text(), (tmp_path / "plain.html").read_text()
    assert "30 nights (2026-11-01 .. 2026-11-30)" in page and "1 change point(s)" in page
    assert "load.bystander_p99_ms @ strategy=x: from night 20 (2026-11-21)" in page
    assert page.count("<img") == plain.count("<img") + 1 and "Nightly history" in page


def test_report_with_an_empty_history_says_so(tmp_path, monkeypatch, capsys):
    from tests.unit.reporting import builders

    run = builders.RunBuilder().write(tmp_path / "run")
    code, _, err = _kqbench(monkeypatch, capsys, "report", str(run), "--history", str(tmp_path / "none"), "--quiet")
    assert code == 0, err
    assert "holds no nights yet" in (run / "report.html").read_text()


@pytest.mark.parametrize("verb", ["compare", "history", "run", "report"])
def test_every_gate_verb_has_help(verb, monkeypatch, capsys):
    code, out, _ = _kqbench(monkeypatch, capsys, verb, "--help")
    assert code == 0 and "Usage:" in out


def test_run_repeat_makes_n_cases_per_point(monkeypatch, capsys):
    code, out, _ = _kqbench(monkeypatch, capsys, "run", "quick", "--repeat", "3", "--dry-run")
    cases = out.split()
    assert code == 0 and len(cases) == 15 and cases[::5] == [f"strategy=status-field,r{r}" for r in range(3)]


def test_results_summarise_writes_the_summary_the_run_would_have(tmp_path, monkeypatch, capsys):
    from harness.drivers import registry
    from harness.results import runs, tables
    from tests.unit.reporting import builders

    run = builders.RunBuilder().write(tmp_path / "run")
    code, out, err = _kqbench(monkeypatch, capsys, "results", "summarise", str(run))
    assert code == 0, err
    written = summaries.read(run)
    expected = summaries.summarise(runs.read_run(run), tables.read(run), registry.drivers())
    assert written.entries.keys() == expected.entries.keys() and len(written.entries) > 0
    assert f"summary: {run / 'summary.json'}" in out


def test_results_summarise_without_tables_says_where_they_are(tmp_path, monkeypatch, capsys):
    from tests.unit.reporting import builders

    run = builders.RunBuilder().write(tmp_path / "run")
    for path in (run / "tables").iterdir():
        path.unlink()
    code, _, err = _kqbench(monkeypatch, capsys, "results", "summarise", str(run))
    assert code != 0 and "kqbench results pull" in err and len(err.strip().splitlines()) == 1
    code, _, err = _kqbench(monkeypatch, capsys, "results", "summarise", str(tmp_path))
    assert code != 0 and "no run.json" in err
