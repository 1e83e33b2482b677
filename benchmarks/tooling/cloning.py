"""A fresh clone of a checkout for the benchmarks that time what a newcomer or CI runs from one."""

from __future__ import annotations

import subprocess
from pathlib import Path


def fresh_clone(repo: Path, work: Path) -> Path:
    """`work/kqbench`, a clone of `repo`'s HEAD; beside it the team's shared folder when `repo` has one,
    as CI's clean clone sees it."""
    clone = work / "kqbench"
    subprocess.run(["git", "clone", "--quiet", str(repo), str(clone)], check=True, timeout=600)
    shared = repo.resolve().parent / "shared"
    if shared.is_dir():
        (work / "shared").symlink_to(shared)
    return clone
