"""What git keeps of a run folder committed under results/: the files results/.gitignore lets through
(README, run.json, summary.json, the manifest, small tables), and the budget they must fit.

results/.gitignore is the one place that says what stays in git; this module asks git about it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

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
    left_out = ignored(repo, names)
    kept = [(name.removeprefix(PLACE + "/"), path.stat().st_size) for name, path in names.items() if name not in left_out]
    return Kept(tuple(sorted(kept, key=lambda item: (-item[1], item[0]))))


@dataclass(frozen=True, slots=True)
class Leaving:
    manifest: Path
    names: tuple[str, ...]
    """The tracked files recorded (paths from the repository's top)."""
    bytes: int
    untracked: bool


def record_leaving(folder: Path, untrack: bool = False, progress: storing.Progress = storing.quiet) -> Leaving:
    """Record the tracked files of folder that results/.gitignore does not keep (raw data committed before the store
    existed) with their place in git history, in folder's manifest; with untrack, take them out of the index too
    (`git rm --cached`: the working copies stay, ignored). Files git keeps are not recorded: they stay versioned by
    git, and a later edit of them (a re-rendered README) is no difference from a manifest."""
    top, tracked = storing.tracked(folder)
    left_out = ignored(top, tracked)
    names = tuple(name for name in tracked if name in left_out)
    manifest = storing.record_git_history(folder, names, progress)
    size = sum((top / name).stat().st_size for name in names if (top / name).is_file())
    if untrack and names:
        storing.git(top, "rm", "--cached", "-q", "--pathspec-from-file=-", "--pathspec-file-nul", stdin="\0".join(names))
    return Leaving(manifest, names, size, untrack and bool(names))


def ignored(repo: Path, names: Iterable[str]) -> set[str]:
    """Which of names (paths from repo's top) the repository's ignore rules leave out, tracked or not."""
    done = storing.git(repo, "check-ignore", "--no-index", "--stdin", "-z", stdin="\0".join(names), allowed=(0, 1))  # 1: none
    return set(filter(None, done.split("\0")))
