"""The ratios and goals in the summary.json of each scheduler-cluster folder given (the output of
benchmarks/bench_scheduler_cluster.py) derived again from its per-implementation files with today's
scheduler_cluster_figures.ratios; nothing else in the file changes.

That function now holds back a p99 of fewer requests than a p99 needs (`intervals.has_quantile`): Kueue's arms at
100k pending served 50 pages, whose "p99" (their slowest) gave the goal "p99 under churn ours / Kueue <= 0.1" as met.
Derived again, that ratio is None and its goal not judged (`met` None). Re-runnable: a second run changes nothing.

    .venv/bin/python benchmarks/scripts/intervals/cluster-ratios.py results/peer/scheduler-cluster-100000

It reads the benchmark's own modules, which left the tree when the measurement became the `heldqueue`
driver (`kqbench run results/peer/scheduler-cluster.yaml`): run it from a checkout of 251cd23, where it ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the benchmark's modules, imported by name as it does
import scheduler_cluster_figures as figs  # noqa: E402
from harness.implementations import names  # noqa: E402


def _as_written(data: dict) -> str:
    """The file's text as the benchmark writes it."""
    return json.dumps(data, indent=2) + "\n"


def _result(folder: Path, label: str) -> dict:
    path = folder / f"{label}.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def main(folders: list[str]) -> int:
    for name in folders:
        folder = Path(name)
        path = folder / "summary.json"
        text = path.read_text() if path.is_file() else ""
        data = json.loads(text) if text else {}
        if "ratios" not in data or _as_written(data) != text:
            print(f"{path}: not a scheduler-cluster summary as the benchmark writes it", file=sys.stderr)
            return 1
        ours = _result(folder, names.REFERENCE)
        peers = list(data.get("by_peer") or [names.KUEUE])
        found = {peer: figs.ratios(ours, _result(folder, peer)) for peer in peers}
        before = json.dumps({"ratios": data["ratios"], "by_peer": data.get("by_peer")})
        data["ratios"] = found[peers[0]]
        if "by_peer" in data:
            data["by_peer"] = found
        changed = [f"  {key}: {was} -> {data['ratios'][key]}" for key, was in json.loads(before)["ratios"].items()
                   if data["ratios"].get(key) != was]
        if json.dumps({"ratios": data["ratios"], "by_peer": data.get("by_peer")}) != before:
            path.write_text(_as_written(data))
        print(f"{path}: {len(changed)} ratios of the first peer derived again", *changed, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
