"""How long quota was held, per case, into a small table git keeps: tables/kueue_holds.parquet of each
kueue-baseline run folder given whose summary predates the hold figures (a newer run's summary.json carries them
as kueue.hold.* with each repeat's sample).

The README blocks' hold rows came from the run's Workloads table (tables/kueue_workloads.parquet, up to 11 MiB),
which leaves git for the results store; the three figures per case are the same function of it
(harness.drivers.kueuebaseline.holding.hold_figures), so a block renders the same from either. Re-runnable: a
folder that has the table, or whose summary has the figures, is left as it is.

    .venv/bin/python benchmarks/scripts/kueuebaseline/hold-rows.py results/large-scale/peers results/tas/peers-recompute
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from harness.drivers.kueuebaseline import holding, tabulating


def main(folders: list[str]) -> int:
    for name in folders:
        folder = Path(name)
        target = folder / "tables" / f"{holding.TABLE}.parquet"
        summary = json.loads((folder / "summary.json").read_text()).get("metrics", {})
        if any(key.startswith("kueue.hold.") for key in summary):
            print(f"{folder}: its summary has the hold figures; nothing to do")
            continue
        if target.is_file():
            print(f"{folder}: {target.name} is there; nothing to do")
            continue
        source = folder / "tables" / f"{tabulating.WORKLOADS_TABLE}.parquet"
        if not source.is_file():
            print(f"{folder}: no {source.name} here: `kqbench results pull {source}` brings it back", file=sys.stderr)
            return 1
        frame = holding.holds_frame(pd.read_parquet(source))
        frame.to_parquet(target, index=False)
        print(f"{folder}: {target.name}, {frame['case'].nunique()} cases, {target.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
