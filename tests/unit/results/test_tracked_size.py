"""git keeps at most LIMIT_MIB under results/: what the READMEs render, not the run data behind it.

Run data belongs in the results store (`kqbench results push`, docs/results.md); a clone carrying it grew to
357 MiB before the store. When this fails, the message names the largest tracked files: push their run and
let results/.gitignore drop them, or keep a smaller table the README's block reads.
"""

from __future__ import annotations

from pathlib import Path

from harness.results import storing

ROOT = Path(__file__).resolve().parents[3]
LIMIT_MIB = 25.0
SHOWN = 10
"""How many of the largest files the failure names."""


def test_results_tracked_in_git_stay_within_the_limit() -> None:
    top, names = storing.tracked(ROOT / "results")
    sizes = sorted(((top / name).stat().st_size, name) for name in names if (top / name).is_file())
    total_mib = sum(size for size, _ in sizes) / 2**20
    largest = ", ".join(f"{name} ({size / 2**20:.2f} MiB)" for size, name in reversed(sizes[-SHOWN:]))
    assert sizes, "git tracks no file under results/: the READMEs' tables would have nothing to render"
    assert total_mib <= LIMIT_MIB, (
        f"git tracks {total_mib:.1f} MiB under results/ (limit {LIMIT_MIB:.0f} MiB); the largest: {largest}. "
        "Push the run (kqbench results push FOLDER) and let results/.gitignore drop what no README block reads")
