"""A/B on one machine: a scenario run with a base commit's code, then with the working code, in one job.

Both sides share the machine, its kernel and the hour, so every metric compares, timings too, which a
baseline of another machine cannot give (harness.reporting.comparing: across machines only counts are
judged). The base side is a `git worktree` of the commit in a temporary folder, removed at the end (also
on failure or Ctrl-C); each side is `python -m harness run` in a child process with PYTHONPATH set to its
tree, so the base runs the base's code with this environment's packages (the A/B needs the two commits'
dependencies to match). The head is the tree the running kqbench was imported from, as it is: uncommitted
changes are what an A/B on a workstation tests, so they are said, not refused.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import harness
from harness.errors import KqbenchError
from harness.results import storing


@dataclass(frozen=True, slots=True)
class Side:
    label: str
    """`base` or `head`."""
    tree: Path
    """The source tree whose code runs."""
    sha: str
    changed: int = 0
    """Files with uncommitted changes in the tree (the head's; a worktree of a commit has none)."""

    def describe(self) -> str:
        changes = f" + {self.changed} uncommitted file(s)" if self.changed else ""
        return f"{self.label}: {self.sha[:12]}{changes} ({self.tree})"


def head_tree() -> Path:
    """The source tree of the running kqbench: the folder holding the imported `harness` package."""
    return Path(harness.__file__).resolve().parents[1]


def resolve(repo: Path, ref: str) -> str:
    """The full sha of commit `ref` in the git repository at `repo`; a one-line error when there is none."""
    if not ref or ref.startswith("-"):
        raise KqbenchError(f"--ab wants a commit (a sha, tag or branch), got {ref!r}")
    found = storing.git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", allowed=(0, 1)).strip()
    if not found:
        raise KqbenchError(f"--ab {ref}: no such commit in {repo} (`git log --oneline` lists them; a shallow "
                           "clone may lack it: `git fetch --unshallow`)")
    return found


def head_side(tree: Path) -> Side:
    """The working code: its commit and how many files differ from it."""
    if not storing.git(tree, "rev-parse", "--is-inside-work-tree", allowed=(0, 128)).strip() == "true":
        raise KqbenchError(f"--ab needs the running kqbench to come from a git checkout; {tree} is not one")
    sha = resolve(tree, "HEAD")
    status = storing.git(tree, "status", "--porcelain", "--untracked-files=no")
    return Side("head", tree, sha, len([line for line in status.splitlines() if line.strip()]))


Runner = Callable[[Sequence[str], Path, dict], int]
"""(argv, cwd, environment) -> exit code: how a side's `kqbench run` starts (a fake in tests)."""


STOP_SECONDS = 120.0
"""How long a side's `kqbench run` gets to tear its cluster down after SIGTERM before it is killed."""


def _subprocess(argv: Sequence[str], cwd: Path, env: dict) -> int:
    child = subprocess.Popen(list(argv), cwd=cwd, env=env)
    try:
        return child.wait()
    except BaseException:
        # Ctrl-C or SIGTERM here: the child tears its cluster down on SIGTERM (a second one it ignores), so it
        # gets one and time to finish; subprocess.run would kill it at once and leave its cluster running.
        if child.poll() is None:
            child.send_signal(signal.SIGTERM)
            try:
                child.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        raise


def run_side(side: Side, scenario: str, overrides: Sequence[str], repeat: int | None, out: Path,
             runner: Runner = _subprocess) -> Path:
    """Run the scenario with the code of `side` into a new folder under `out`; the run folder it wrote."""
    out.mkdir(parents=True, exist_ok=True)
    before = set(out.iterdir())
    argv = [sys.executable, "-m", "harness", "run", scenario, "--out", str(out.resolve()), "--no-report",
            *(["--repeat", str(repeat)] if repeat else []), *(arg for item in overrides for arg in ("--set", item))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(side.tree), *filter(None, [os.environ.get("PYTHONPATH")])])}
    code = runner(argv, side.tree, env)
    made = sorted(path for path in set(out.iterdir()) - before if path.is_dir())
    if code != 0 or not made or not (made[-1] / "summary.json").is_file():
        where = f"; partial results in {made[-1]}" if made else ""
        raise KqbenchError(f"the {side.label} run ({side.sha[:12]}) of {scenario} failed (exit {code}){where}: "
                           "nothing to compare")
    return made[-1]


def run(base_ref: str, scenario: str, overrides: Sequence[str], repeat: int | None, out: Path,
        say: Callable[[str], None], tree: Path | None = None, runner: Runner = _subprocess) -> tuple[Path, Path]:
    """(base run folder, head run folder): the scenario run at `base_ref` (a worktree), then with the working code."""
    head = head_side(tree or head_tree())
    base_sha = resolve(head.tree, base_ref)
    worktree = Path(tempfile.mkdtemp(prefix=f"kqbench-ab-{base_sha[:12]}-"))
    storing.git(head.tree, "worktree", "add", "--detach", str(worktree), base_sha)
    try:
        base = Side("base", worktree, base_sha)
        say(f"A/B of {scenario} on this machine; {base.describe()}; {head.describe()}; runs under {out}")
        base_run = run_side(base, scenario, overrides, repeat, out / "base", runner)
        head_run = run_side(head, scenario, overrides, repeat, out / "head", runner)
    finally:
        storing.git(head.tree, "worktree", "remove", "--force", str(worktree), allowed=(0, 128))
    return base_run, head_run
