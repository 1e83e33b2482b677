"""The nightly CI files stay valid: workflow YAML with a schedule calling ci/nightly.sh; the script is executable."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

CI = Path(__file__).resolve().parents[3] / "ci"


def test_workflow_is_valid_and_scheduled():
    workflow = yaml.safe_load((CI / "github-workflow-nightly.yaml").read_text())
    triggers = workflow.get("on") or workflow.get(True)  # YAML 1.1 reads a bare `on` as True
    assert triggers["schedule"][0]["cron"].count(" ") == 4
    steps = workflow["jobs"]["nightly"]["steps"]
    assert any("ci/nightly.sh" in step.get("run", "") for step in steps)
    assert all("uses" in step or "run" in step for step in steps)


def test_nightly_script_is_executable_bash():
    script = CI / "nightly.sh"
    assert os.access(script, os.X_OK)
    subprocess.run(["bash", "-n", str(script)], check=True)
