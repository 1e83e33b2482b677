"""Baselines that know their machine: fingerprints from /proc, their differences, calibration, baselines per
machine, and older summaries read with a one-line note."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from harness.errors import KqbenchError
from harness.reporting import comparing
from harness.results import baselining, headlines, machines, runs, summaries
from harness.running import calibrating
from tests.unit import clirunning

ROOT = Path(__file__).resolve().parents[3]
BASELINE_V2 = ROOT / "results" / "baselines" / "quick.summary.json"
BASELINE_V1 = ROOT / "results" / "baselines" / "quick-v1-20261129-110045.summary.json"
CPUINFO = """processor\t: 0
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz
cpu cores\t: 1

processor\t: 1
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz
cpu cores\t: 1
"""
MEMINFO = "MemTotal:        8140500 kB\nMemFree:         1000000 kB\n"
HERE = machines.parse(CPUINFO, MEMINFO, "6.8.0-1017-azure\n")


def test_the_fingerprint_is_read_from_proc_text():
    assert HERE == machines.Fingerprint("Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", 2, 8140500 * 1024,
                                        "6.8.0-1017-azure")


def test_this_machines_fingerprint_reads():
    found = machines.read()
    assert found.cpus >= 1 and found.memory_bytes > 0 and found.kernel


def test_a_proc_without_the_files_gives_a_fingerprint_not_an_error(tmp_path):
    found = machines.read(tmp_path)
    assert found.cpu_model == "unknown" and found.memory_bytes == 0


@pytest.mark.parametrize("change, differs", [
    ({}, []),
    ({"memory_bytes": int(8140500 * 1024 * 1.01)}, []),  # a few MiB between kernels: the same machine
    ({"cpu_model": "AMD EPYC 7763 64-Core Processor"}, ["cpu_model"]),
    ({"cpus": 4, "memory_bytes": 16 * 2 ** 30}, ["cpus", "memory"]),
    ({"kernel": "6.11.0-1015-azure"}, ["kernel"]),
])
def test_differences_name_the_fields_two_machines_do_not_share(change, differs):
    found = machines.differences(HERE, replace(HERE, **change))
    assert [line.split(":")[0] for line in found] == differs
    assert all("->" in line for line in found)


def test_the_key_is_readable_and_differs_with_any_field():
    assert HERE.key().startswith("intel-r-xeon-r-platinum-8370c-cpu-2-80ghz-2c-")
    assert HERE.key() == machines.parse(CPUINFO, MEMINFO, "6.8.0-1017-azure").key()
    assert HERE.key() != replace(HERE, kernel="6.11").key()


@pytest.mark.parametrize("data", [None, {}, {"cpu_model": "x"}, "text"])
def test_an_absent_or_incomplete_fingerprint_reads_as_none(data):
    assert machines.Fingerprint.from_dict(data) is None


def test_calibration_is_the_median_of_the_cases():
    frame = pd.concat([calibrating.figures([0.6, 0.7, 0.8], 1.0), calibrating.figures([0.9, 1.0, 1.1], 1.0),
                       calibrating.figures([0.5, 0.6, 0.7], 1.0)], ignore_index=True)
    found = machines.calibration_of(frame)
    assert found.p50_ms == pytest.approx(0.7) and found.cases == pytest.approx((0.7, 1.0, 0.6))
    assert found.requests == 3 and found.path == calibrating.PATH
    assert machines.calibration_of(None) is None and machines.calibration_of(frame.iloc[0:0]) is None


def test_the_calibration_keeps_its_latencies_to_the_microsecond():
    frame = calibrating.figures([0.7004, 0.7006, 0.9, 1.2], 1.0)
    assert json.loads(frame["histogram"].iloc[0]) == {"0.7": 1, "0.701": 1, "0.9": 1, "1.2": 1}


def test_each_case_reports_its_calibration_p50_with_an_interval_from_its_requests():
    tables = {machines.CALIBRATION_TABLE: pd.concat(
        [calibrating.figures([0.6 + i * 0.001 for i in range(1000)], 1.0).assign(case="a"),
         calibrating.figures([1.2 + i * 0.002 for i in range(1000)], 1.0).assign(case="b")], ignore_index=True)}
    metric, = [m for m in headlines.metrics(tables, "b") if m.name == headlines.CALIBRATION_METRIC]
    assert metric.value == pytest.approx(2.199, abs=0.002) and sum(metric.histograms[0].values()) == 1000
    entry = summaries.estimate(metric.name, "strategy=x", [metric])
    assert entry.low < entry.value < entry.high and entry.high - entry.low < 0.2 and entry.n == 1000


def _position(point: str, value: float, calibration: float) -> list[summaries.Entry]:
    return [summaries.Entry("load.position_query_p50_ms", point, value, "ms", "lower", [value], value * 0.95,
                            value * 1.05, 400, value * 0.001),
            summaries.Entry(headlines.CALIBRATION_METRIC, point, calibration, "ms", "lower", [calibration],
                            calibration * 0.99, calibration * 1.01, 1000, 0.001)]


def test_a_designs_latency_over_the_calibration_of_its_own_cases():
    entries = _position("strategy=a", 40.0, 2.0) + _position("strategy=b", 6.0, 1.0)
    entries.append(summaries.Entry("load.position_query_p99_ms", "strategy=a", 90.0, "ms", "lower"))
    found = {e.point: e for e in summaries.calibrated_ratios(entries, ("load.position_query_p50_ms",))}
    assert set(found) == {"strategy=a", "strategy=b"}
    assert found["strategy=a"].metric == "ratio.position_query_p50_ms.over_calibration"
    assert found["strategy=a"].value == pytest.approx(20.0) and found["strategy=b"].value == pytest.approx(6.0)
    assert found["strategy=a"].low < 20.0 < found["strategy=a"].high and found["strategy=a"].note == ""


def test_no_calibrated_ratio_where_a_point_has_no_calibration():
    entries = _position("strategy=a", 40.0, 2.0)[:1]
    assert summaries.calibrated_ratios(entries, ("load.position_query_p50_ms",)) == []


def _summary(machine=HERE, calibration=0.7, **values) -> summaries.Summary:
    entries = {}
    for metric, value in values.items():
        entry = summaries.Entry(metric, "strategy=x", value, "ms", "lower", [value], value * 0.9, value * 1.1, 3)
        entries[entry.key] = entry
    cal = machines.Calibration(calibration, (calibration,), 1000, calibrating.PATH) if calibration else None
    return summaries.Summary("run", "quick", "ok", entries, machine=machine, calibration=cal)


def test_a_version_3_summary_keeps_machine_and_calibration(tmp_path):
    summaries.write(tmp_path, _summary(m=1.0))
    back = summaries.read(tmp_path)
    assert back.machine == HERE and back.calibration.p50_ms == 0.7 and back.notes == []


def test_a_version_3_summary_without_a_machine_reads_with_a_note(tmp_path):
    summaries.write(tmp_path, _summary(machine=None, m=1.0))
    back = summaries.read(tmp_path)
    assert back.machine is None and len(back.notes) == 1 and "no machine fingerprint" in back.notes[0]


def test_the_committed_version_2_baseline_reads_with_one_note_and_whole_ms_steps():
    summary = summaries.read(BASELINE_V2)
    assert summary.schema_version == 2 and summary.machine is None and summary.calibration is None
    assert len(summary.notes) == 1 and "\n" not in summary.notes[0] and "version-2" in summary.notes[0]
    p50 = summary.entries["load.position_query_p50_ms @ strategy=aggregated-indexed"]
    assert (p50.value, p50.low, p50.high, p50.step) == (3.0, 2.5, 3.5, 1.0)  # was [3.0, 3.0]: narrower than 1 ms
    ratio = summary.entries["ratio.position_query_p50_ms.indexed_over_snapshot @ all"]
    assert ratio.value == pytest.approx(0.6) and "parts 3 and 5 ms" in ratio.note
    assert ratio.high - ratio.low > 0.657 - 0.548  # re-derived from the widened parts
    assert summary.entries["apiserver.write_qps[churn] @ strategy=aggregated-indexed"].step is None


def test_a_version_1_baseline_reads_with_a_note_and_steps_but_no_intervals():
    summary = summaries.read(BASELINE_V1)
    assert summary.schema_version == 1 and len(summary.notes) == 1
    latency = [e for e in summary.entries.values() if e.metric.endswith("_p50_ms") and not e.metric.startswith("ratio.")]
    assert latency and all(e.step == 1.0 or e.value >= 100 for e in latency)
    assert all(e.low is None for e in summary.entries.values())


def test_a_metric_on_one_side_stays_missing_or_new_across_versions():
    base = summaries.read(BASELINE_V2)
    new = _summary(**{"load.position_query_p50_ms": 3.0, "load.something_new_p50_ms": 1.0})
    rows = {r.key: r.verdict for r in comparing.compare(base, new, comparing.load_thresholds(ROOT / "ci" / "thresholds.yaml"))}
    assert rows["load.something_new_p50_ms @ strategy=x"] == "new"
    assert rows["ratio.position_query_p50_ms.indexed_over_snapshot @ all"] == "missing"


@pytest.mark.parametrize("base, new, same, fields", [
    (HERE, HERE, True, ()),
    (HERE, replace(HERE, cpus=4), False, ("cpus: 2 -> 4",)),
    (None, HERE, None, ()),
])
def test_machine_check(base, new, same, fields):
    check = comparing.machine_check(_summary(machine=base, calibration=0.7), _summary(machine=new, calibration=1.4))
    assert (check.same, check.differences) == (same, fields) and check.calibration == pytest.approx(2.0)


# -- the CLI: compare across machines, baselines per machine ----------------------------------------------


_kqbench = clirunning.kqbench


def _run_folder(folder: Path, summary: summaries.Summary, status: str = "ok") -> Path:
    folder.mkdir(parents=True)
    runs.write_run(folder, runs.RunRecord("run", "quick", "quick.yaml", {}, [], status=status, fingerprint=summary.machine))
    summaries.write(folder, summary)
    return folder


def test_compare_across_machines_judges_counts_and_names_the_fields_and_the_command(tmp_path, monkeypatch, capsys):
    base = _run_folder(tmp_path / "base", _summary(**{"load.bystander_p99_ms": 40.0}))
    new = _run_folder(tmp_path / "new", _summary(machine=replace(HERE, cpu_model="AMD EPYC 7763", kernel="6.11"),
                                                 **{"load.bystander_p99_ms": 400.0}))
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(new))
    assert code == 0 and "PASS: no metric regressed (counts only: 1 timing(s) unchecked, other machine)" in out
    line, = [line for line in err.splitlines() if "another machine" in line]
    assert "cpu_model: Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz -> AMD EPYC 7763" in line
    assert "kernel: 6.8.0-1017-azure -> 6.11" in line and f"kqbench baseline record {new}" in line
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(new), "--any-machine")
    assert code == 1 and "judged anyway" in err and "FAIL" in err


def test_compare_on_one_machine_prints_the_calibration_and_a_note_when_it_drifted(tmp_path, monkeypatch, capsys):
    base = _run_folder(tmp_path / "base", _summary(**{"load.bystander_p99_ms": 40.0}))
    steady = _run_folder(tmp_path / "steady", _summary(calibration=0.75, **{"load.bystander_p99_ms": 40.0}))
    busy = _run_folder(tmp_path / "busy", _summary(calibration=1.4, **{"load.bystander_p99_ms": 40.0}))
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(steady))
    assert code == 0 and "calibration p50 0.7 -> 0.75 ms (x1.07)" in out and err == ""
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(base), str(busy))
    assert code == 0 and "slower or busier" in err


def test_compare_with_a_baseline_without_a_fingerprint_judges_with_one_note(tmp_path, monkeypatch, capsys):
    new = _run_folder(tmp_path / "new", _summary(**{"load.position_query_p50_ms": 3.0}))
    code, out, err = _kqbench(monkeypatch, capsys, "compare", str(BASELINE_V2), str(new))
    assert code == 0 and "PASS" in out
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "version-2" in notes[0]


def test_baselines_per_machine_are_recorded_and_found(tmp_path):
    root = tmp_path / "baselines"
    run = _run_folder(tmp_path / "run", _summary(m=1.0))
    assert baselining.find(root, "quick", HERE) is None
    path = baselining.record(root, run)
    assert path == root / "machines" / HERE.key() / "quick.summary.json"
    assert json.loads((path.parent / "machine.json").read_text())["cpus"] == 2
    assert baselining.find(root, "quick", HERE) == path
    assert baselining.find(root, "quick", replace(HERE, cpus=4)) is None


def test_the_shared_baseline_is_found_only_on_the_machine_that_recorded_it(tmp_path):
    root = tmp_path / "baselines"
    root.mkdir()
    summaries.write(root, _summary(m=1.0))
    (root / "summary.json").rename(root / "quick.summary.json")
    assert baselining.find(root, "quick", HERE) == root / "quick.summary.json"
    assert baselining.find(root, "quick", replace(HERE, cpu_model="other")) is None
    (root / "quick.summary.json").write_text(BASELINE_V2.read_text())  # records no machine: never this one
    assert baselining.find(root, "quick", HERE) is None


@pytest.mark.parametrize("status, machine, error", [("failed", HERE, "ended failed"), ("ok", None, "records no machine")])
def test_a_baseline_is_recorded_only_from_a_finished_run_that_knows_its_machine(tmp_path, status, machine, error):
    run = _run_folder(tmp_path / "run", _summary(machine=machine, m=1.0), status=status)
    with pytest.raises(KqbenchError, match=error):
        baselining.record(tmp_path / "baselines", run)


def test_baseline_cli_find_exits_1_without_one_and_prints_the_path_with_one(tmp_path, monkeypatch, capsys):
    root = tmp_path / "baselines"
    code, out, _ = _kqbench(monkeypatch, capsys, "baseline", "find", "quick", "--dir", str(root))
    assert (code, out) == (1, "")
    here = machines.read()
    _run_folder(tmp_path / "run", _summary(machine=here, m=1.0))
    code, out, _ = _kqbench(monkeypatch, capsys, "baseline", "record", str(tmp_path / "run"), "--dir", str(root))
    assert code == 0 and "recorded:" in out
    code, out, _ = _kqbench(monkeypatch, capsys, "baseline", "find", "quick", "--dir", str(root))
    assert code == 0 and out.strip() == str(baselining.path_for(root, "quick", here))


@pytest.mark.parametrize("text, error", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a summary"),
    (json.dumps({"schema_version": 2, "metrics": {"m @ p": {"metric": "m"}}}), "metric 'm @ p' is not a summary entry"),
    (json.dumps({"schema_version": 2, "metrics": {"m @ p": 3}}), "not a summary entry"),
])
def test_a_broken_summary_is_a_one_line_error_not_a_crash(tmp_path, text, error):
    path = tmp_path / "summary.json"
    path.write_text(text)
    with pytest.raises(KqbenchError, match=error) as raised:
        summaries.read(path)
    assert "\n" not in str(raised.value)
