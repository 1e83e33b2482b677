"""A new experiment is one folder and one registry line: the test-only `exampledriver` runs through
the runner, the summary and the report with no other change.

It runs in a child Python, whose registry gets the one line before the scenario model is built from
it (the phase union is made on first import). The cluster is adopted from a state file, so no process
starts; the phases drive nothing but the example driver.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import json, sys
from pathlib import Path

from harness.drivers import registry
from tests.unit.running import exampledriver

registry._DRIVER_PACKAGES = (*registry._DRIVER_PACKAGES, exampledriver)  # the one registry line

from harness.clusters import state
from harness.results import tables
from harness.running import hooks, runner
from harness.scenarios import loading

out = Path(sys.argv[1])
state.save(state.ClusterInfo(name="adopted", backend="kwok", kubeconfig=str(out / "kubeconfig"),
                             apiserver_url="https://127.0.0.1:1"))
scenario = loading.parse(
    "name: example\\ncluster: {name: adopted, reuse: true}\\nscheduler: {enabled: false}\\n"
    "load: {mix: [{example_tag: counted}]}\\n"
    "phases:\\n  count: {kind: example, steps: 2}\\nsweep:\\n  phases.count.steps: [2, 3]\\n", "example.yaml")
result = runner.run(scenario, hooks.Hooks(drivers=registry.drivers()),
                    runner.RunOptions(out_parent=out / "runs"), say=lambda line: None)
report = result.report.read_text()
print(json.dumps({
    "status": result.record.status,
    "steps": {e.point: e.value for e in result.summary.entries.values() if e.metric == "example.steps"},
    "rows": len(tables.read(result.folder)["example_steps"]),
    "tags": sorted(set(tables.read(result.folder)["example_steps"]["tag"])),
    "section": "<h2>Example</h2><p>5 steps counted.</p>" in report,
    "verdict": "Counting" in report[report.index('id="verdict"'):report.index('id="pivot"')],
    "figure": "Steps counted per design" in report,
    "perfdata": json.loads((result.folder / "perfdata.json").read_text())["dataItems"],
}))
"""


def test_an_example_driver_runs_through_the_runner_the_summary_and_the_report(tmp_path):
    env = {**os.environ, "KQBENCH_STATE": str(tmp_path / "state"), "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, env=env,
                           cwd=ROOT, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["status"] == "ok"
    assert sorted(seen["steps"].values()) == [2.0, 3.0]  # one summary entry per sweep point
    assert seen["rows"] == 5 and seen["tags"] == ["counted"]  # its own load.mix field, read from the scenario
    assert seen["section"] and seen["verdict"] and seen["figure"]
    assert [item["data"] for item in seen["perfdata"] if item["labels"]["Metric"] == "ExampleSteps"] == [{"Count": 5.0}]


def test_without_its_registry_line_the_scenario_refuses_the_kind_and_its_mix_field():
    from harness.scenarios import loading

    with pytest.raises(loading.ScenarioError, match="'example'"):
        loading.parse("name: t\nphases:\n  count: {kind: example}\n", "t.yaml")
    with pytest.raises(loading.ScenarioError, match="example_tag"):
        loading.parse("name: t\nload: {mix: [{example_tag: x}]}\n", "t.yaml")
