"""Ratio intervals drawn again on the log scale, in the summary.json of each run folder given: every entry whose
unit is "ratio" and that keeps its repeats' values (`samples`) gets `low` and `high` from
harness.stats.intervals.ratio_interval with the fixed seed, and that `seed`; nothing else in the file changes.

Summaries written before the log scale put some ratios' intervals below zero (3.22 [-3.44, 9.89] for a time to
admission ours / Kueue). Their raw tables are out of git, but each entry keeps the per-repeat values its interval
came from, which is all the new interval needs (harness.results.summaries.redraw_ratio). Re-runnable: a second
run changes nothing.

    .venv/bin/python benchmarks/scripts/intervals/ratio-intervals.py results/large-scale/fair-100cq \
        results/large-scale/fair-100cq-paced results/large-scale/fair-100cq-stretched \
        results/large-scale/fair-100cq-stretched-hold results/peer/kueue-baseline-full-3x \
        results/peer/kueue-baseline-1cohort-3x-batched results/peer/kueue-baseline-full-hold
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.results import summaries


def _as_written(data: dict) -> str:
    """The file's text as summaries.write lays it out."""
    return json.dumps(data, indent=2, sort_keys=True)


def main(folders: list[str]) -> int:
    for name in folders:
        path = Path(name) / summaries.FILE
        if not path.is_file():
            print(f"{path} does not exist: give run folders", file=sys.stderr)
            return 1
        text = path.read_text()
        data = json.loads(text)
        if _as_written(data) != text.rstrip("\n"):
            print(f"{path} is not laid out as kqbench writes it; not rewritten", file=sys.stderr)
            return 1
        summaries.Summary.from_dict(data, str(path))  # refuses a format this kqbench does not read
        changed = []
        for key, raw in data["metrics"].items():
            entry = summaries.Entry(**{f: raw[f] for f in raw if f in summaries.Entry.__dataclass_fields__})
            redrawn = summaries.redraw_ratio(entry)
            if (redrawn.low, redrawn.high, redrawn.seed) == (raw["low"], raw["high"], raw.get("seed")):
                continue
            changed.append(f"  {key}: [{raw['low']:.3g}, {raw['high']:.3g}] -> [{redrawn.low:.3g}, {redrawn.high:.3g}]")
            raw.update(low=redrawn.low, high=redrawn.high, seed=redrawn.seed)
        if changed:
            path.write_text(_as_written(data) + text[len(text.rstrip("\n")):])
        print(f"{path}: {len(changed)} ratio intervals drawn again", *changed, sep="\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
