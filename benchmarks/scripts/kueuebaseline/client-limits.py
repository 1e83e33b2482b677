"""The client-side limit each case's scheduler ran with, read from its log, into client-limits.json of each run
folder given whose case records predate `client_limits` (harness/readmes/baselinetables.py reads the file).

Kueue logs its whole Configuration when it starts (v0.17 "Successfully loaded configuration", v0.19
"Configuration loaded": clientConnection qps and burst, qps -1 for none); the reference scheduler logs "scheduler running: ... qps=Q" (None for none) and takes its
burst from the scenario's scheduler section, else its own default. The logs are raw data: pull the run first.

    .venv/bin/kqbench results pull results/peer/kueue-baseline-three-peers-3x
    .venv/bin/python benchmarks/scripts/kueuebaseline/client-limits.py results/peer/kueue-baseline-three-peers-3x
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

import yaml

from harness.readmes import baselinetables
from scheduler import settings as scheduler_settings

OURS = re.compile(r"scheduler running: .*\bqps=(None|[0-9.]+)")


def _lines(path: Path) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", errors="replace") as log:
        return log.read().splitlines()


def _kueue(lines: list[str]) -> dict | None:
    for line in lines:
        config = json.loads(line).get("config") if line.startswith("{") and "clientConnection" in line else None
        if isinstance(config, str):
            client = yaml.safe_load(config).get("clientConnection") or {}
            qps = float(client["qps"])
            return {"qps": None if qps < 0 else qps, "burst": None if qps < 0 else int(client["burst"])}
    return None


def _ours(lines: list[str], scheduler: dict) -> dict | None:
    for line in lines:
        found = OURS.search(line)
        if found:
            if found.group(1) == "None":
                return {"qps": None, "burst": None}
            burst = scheduler.get("burst") or scheduler_settings.SchedulerSettings(kubeconfig="").burst
            return {"qps": float(found.group(1)), "burst": int(burst)}
    return None


def _case_limits(folder: Path, case: dict, scenario: dict) -> dict | None:
    scheduler = {**scenario.get("scheduler", {})}
    for key, value in case.get("params", {}).items():  # {"scheduler": {...}} or {"scheduler.FIELD": value}
        scheduler.update(value if key == "scheduler" else {key.removeprefix("scheduler."): value}
                         if key.startswith("scheduler.") else {})
    case_dir = folder / "cases" / case["id"]
    kueue = scheduler.get("implementation") == "kueue"
    logs = sorted(case_dir.glob("kueue-*.log*" if kueue else "scheduler-*.log*"))
    if not logs:
        raise SystemExit(f"{case_dir}: no scheduler log; `kqbench results pull {folder}` brings the run's logs back")
    lines = _lines(logs[0])
    return _kueue(lines) if kueue else _ours(lines, scheduler)


def main(folders: list[str]) -> int:
    for name in folders:
        folder = Path(name)
        record = json.loads((folder / "run.json").read_text())
        cases = {case["id"]: _case_limits(folder, case, record.get("scenario", {})) for case in record["cases"]
                 if case.get("status") == "ok"}
        unread = sorted(case for case, limits in cases.items() if limits is None)
        if unread:
            raise SystemExit(f"{folder}: no client limits in the logs of {', '.join(unread)}")
        out = folder / baselinetables.LIMITS_FILE
        out.write_text(json.dumps({"source": "the schedulers' logs (benchmarks/scripts/kueuebaseline/client-limits.py)",
                                   "cases": cases}, indent=1, sort_keys=True) + "\n")
        print(f"{out}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
