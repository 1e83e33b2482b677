"""Baselines per machine: where a machine's baseline of a scenario lives, finding it, recording one.

A baseline is a summary.json. The committed one, `results/baselines/<scenario>.summary.json`, is the
development machine's; every other machine keeps its own under
`results/baselines/machines/<fingerprint key>/<scenario>.summary.json`, recorded from one of its own
runs (`ci/nightly.sh` does on a machine's first night). `find` prefers the machine's own and takes
the committed one only when its fingerprint is this machine's: a baseline that records no machine
is never taken for this one. `find_for_counts` is what a machine without one of its own is gated
against: the newest baseline of the scenario on any machine, whose counts (not its timings) compare.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harness.errors import KqbenchError
from harness.results import machines, runs, summaries

ROOT = Path("results") / "baselines"
MACHINES = "machines"


def path_for(root: Path, scenario: str, fingerprint: machines.Fingerprint) -> Path:
    """Where the baseline of `scenario` for the machine with `fingerprint` lives under `root`."""
    return Path(root) / MACHINES / fingerprint.key() / f"{scenario}.summary.json"


def find(root: Path, scenario: str, fingerprint: machines.Fingerprint) -> Path | None:
    """This machine's baseline of `scenario`: its own, else the committed one if it ran on this machine."""
    own = path_for(root, scenario, fingerprint)
    if own.is_file():
        return own
    shared = Path(root) / f"{scenario}.summary.json"
    if shared.is_file():
        recorded = summaries.read(shared).machine
        if recorded is not None and not machines.differences(recorded, fingerprint):
            return shared
    return None


def find_for_counts(root: Path, scenario: str, fingerprint: machines.Fingerprint) -> Path | None:
    """This machine's baseline of `scenario`, else the newest (by run id) that records any machine; None without.

    A baseline without a fingerprint is left out: compare cannot tell it is another machine's, and would
    judge its timings too."""
    own = find(root, scenario, fingerprint)
    if own is not None:
        return own
    candidates = [Path(root) / f"{scenario}.summary.json",
                  *sorted((Path(root) / MACHINES).glob(f"*/{scenario}.summary.json"))]
    recorded = []
    for path in candidates:
        summary = summaries.read(path) if path.is_file() else None
        if summary is not None and summary.machine is not None:
            recorded.append((summary.run_id, str(path), path))
    return max(recorded)[2] if recorded else None


def record(root: Path, run_folder: Path) -> Path:
    """Copy a finished run's summary.json to its machine's baseline of its scenario; the path written."""
    run_folder = Path(run_folder)
    record_ = runs.read_run(run_folder)
    summary = summaries.read(run_folder)
    if record_.status != "ok":
        raise KqbenchError(f"{run_folder} ended {record_.status}: a baseline comes from a run whose cases all "
                           "finished ok")
    if summary.machine is None:
        raise KqbenchError(f"{run_folder}/summary.json records no machine (a summary before version 3): "
                           f"`kqbench report {run_folder}` does not add one; record a new run")
    target = path_for(root, summary.scenario or record_.scenario_name, summary.machine)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(run_folder / "summary.json", target)
    (target.parent / "machine.json").write_text(json.dumps(summary.machine.to_dict(), indent=2, sort_keys=True) + "\n")
    return target


def record_command(scenario: str, new: Path) -> str:
    """The command that records a baseline on the machine that made `new` (a run folder or its summary.json)."""
    folder = Path(new)
    if folder.name == "summary.json":
        folder = folder.parent
    if (folder / "run.json").is_file():
        return f"kqbench baseline record {folder}"
    return f"kqbench run {scenario or 'SCENARIO'} --repeat 3, then kqbench baseline record <its run folder>"
