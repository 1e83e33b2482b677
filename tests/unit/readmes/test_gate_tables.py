"""Tables of gate verdicts over many runs, from `kqbench compare --json` files."""

from __future__ import annotations

import json

import pytest

from harness.errors import KqbenchError
from harness.readmes import gatetables


def _row(metric: str, point: str, verdict: str, change: float = 0.0) -> dict:
    return {"key": f"{metric} @ {point}", "metric": metric, "point": point, "verdict": verdict, "change": change}


def _write(tmp_path, name: str, rows: list[dict]) -> str:
    counts = {v: sum(r["verdict"] == v for r in rows) for v in ("regressed", "inconclusive", "same")}
    (tmp_path / name).write_text(json.dumps({"counts": counts, "rows": rows}))
    return name


@pytest.fixture
def runs(tmp_path):
    p99 = "load.position_query_p99_ms"
    return {
        "same-1": _write(tmp_path, "s1.json", [_row(p99, "strategy=a", "same"), _row(p99, "strategy=b", "inconclusive")]),
        "same-2": _write(tmp_path, "s2.json", [_row(p99, "strategy=a", "same"), _row(p99, "strategy=b", "same")]),
        "changed-1": _write(tmp_path, "c1.json", [_row(p99, "strategy=a", "regressed", 3.05),
                                                  _row(p99, "strategy=b", "regressed", 2.5),
                                                  _row("ratio.x", "all", "regressed", 0.6)]),
        "changed-2": _write(tmp_path, "c2.json", [_row(p99, "strategy=a", "inconclusive"),
                                                  _row("ratio.x", "all", "same")]),
    }


def test_rates_count_runs_per_arm_and_family(tmp_path, runs):
    table = gatetables.rates({"arms": {"same code": [runs["same-1"], runs["same-2"]],
                                       "changed": [runs["changed-1"], runs["changed-2"]]}}, tmp_path).split("\n")
    assert table[0] == "| runs with a regression | same code | changed |"
    assert table[2] == "| the gate: any metric regressed | 0 / 2 | 1 / 2 |"
    # only families that regressed somewhere; a run counts once however many of its points regressed
    assert table[3] == "| `load.position_query_p99_ms` | 0 / 2 (1 inconclusive) | 1 / 2 (1 inconclusive) |"
    assert table[4] == "| `ratio.x` | 0 / 2 | 1 / 2 |"
    assert len(table) == 5


def test_runs_list_what_regressed_with_its_change(tmp_path, runs):
    table = gatetables.runs({"runs": {"same-1": runs["same-1"], "changed-1": runs["changed-1"]}}, tmp_path).split("\n")
    assert table[2] == "| same-1 | 0 | 1 | 1 | - |"
    assert table[3] == ("| changed-1 | 3 | 0 | 0 | `load.position_query_p99_ms` @ strategy=a +305%; "
                        "`load.position_query_p99_ms` @ strategy=b +250%; `ratio.x` @ all +60% |")


def test_a_file_that_is_not_a_comparison_is_named(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(KqbenchError, match="x.json is not a comparison"):
        gatetables.runs({"runs": {"x": "x.json"}}, tmp_path)
    with pytest.raises(KqbenchError, match="nope.json does not exist"):
        gatetables.rates({"arms": {"a": ["nope.json"]}}, tmp_path)


def test_kinds_say_per_threshold_rule_what_a_known_and_a_new_machine_gate(tmp_path):
    (tmp_path / "thresholds.yaml").write_text(
        "schema_version: 1\nthresholds:\n"
        "  - {metric: etcd.largest_object_bytes, kind: count, max_regression: 0.25}\n"
        "  - {metric: invariants.failed, kind: count, max_regression: 0, max_absolute: 0}\n"
        "  - {metric: 'load.*_p99_ms', point: 'strategy=s*', max_regression: 1.0}\n"
        "  - {metric: 'apiserver.writes_per_admission*', scenario: quick, kind: count, max_regression: 0.3}\n")
    table = gatetables.kinds({"file": "thresholds.yaml"}, tmp_path).split("\n")
    assert table[2:] == [
        "| `etcd.largest_object_bytes` | count | +25% | gated | gated, against the newest baseline of any machine |",
        "| `invariants.failed` | count | +0 absolute | gated | gated, against the newest baseline of any machine |",
        "| `load.*_p99_ms` @ `strategy=s*` | timing | +100% | gated | unchecked |",
        "| `apiserver.writes_per_admission*` in `quick` | count | +30% | gated "
        "| gated, against the newest baseline of any machine |"]
    with pytest.raises(KqbenchError, match="does not exist"):
        gatetables.kinds({"file": "missing.yaml"}, tmp_path)
