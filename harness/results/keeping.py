"""What git keeps of a run folder committed under results/: the files results/.gitignore lets through
(README, run.json, summary.json, the manifest, small tables), and the budget they must fit.

results/.gitignore is the one place that says what stays in git; this module asks git about it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.errors import KqbenchError
from harness.results import manifests, storing

BUDGET_BYTES = 1 << 20
"""What one new run folder may add to git: the figures' inputs, never raw series (1 MiB)."""
REPO = Path(__file__).resolve().parents[2]
"""The kqbench checkout, whose results/.gitignore is asked."""
PLACE = "results/_a_topic_/_a_run_"
"""Where a run folder is pictured when its files are asked about (a topic folder, not the ignored results/runs/)."""


@dataclass(frozen=True, slots=True)
class Kept:
    files: tuple[tuple[str, int], ...]
    """(path in the folder, bytes) of every file git keeps, largest first."""

    @property
    def bytes(self) -> int:
        return sum(size for _, size in self.files)

    def over_budget(self, budget: int = BUDGET_BYTES) -> str:
        """'' within budget, else a one-line message naming the largest files."""
        if self.bytes <= budget:
            return ""
        largest = ", ".join(f"{name} ({size / 1024:.0f} KiB)" for name, size in self.files[:5])
        return (f"git would keep {self.bytes / 2**20:.2f} MiB of this run, over the {budget / 2**20:.0f} MiB budget; "
                f"largest: {largest}: keep raw data in the store (results/.gitignore decides what git keeps)")


def kept_in_git(folder: Path, repo: Path = REPO) -> Kept:
    """The files of folder (and its manifest) that git would keep were the folder committed under results/."""
    files = [*storing.folder_files(folder), *([folder / manifests.FILE_NAME] if (folder / manifests.FILE_NAME).is_file() else [])]
    names = {f"{PLACE}/{p.relative_to(folder).as_posix()}": p for p in files}
    try:
        done = subprocess.run(["git", "check-ignore", "--no-index", "--stdin", "-z"], cwd=repo, input="\0".join(names).encode(),
                              capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise KqbenchError(f"git check-ignore in {repo} could not run ({error}): is git installed?") from None
    if done.returncode not in (0, 1):  # 1: nothing ignored
        raise KqbenchError(f"git check-ignore in {repo}: {done.stderr.decode(errors='replace').strip()}")
    ignored = set(filter(None, done.stdout.decode().split("\0")))
    kept = [(name.removeprefix(PLACE + "/"), path.stat().st_size) for name, path in names.items() if name not in ignored]
    return Kept(tuple(sorted(kept, key=lambda item: (-item[1], item[0]))))
