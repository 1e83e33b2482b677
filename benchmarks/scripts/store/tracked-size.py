"""What git keeps under results/ at each batch that moved old run data to the store, from git itself.

    .venv/bin/python benchmarks/scripts/store/tracked-size.py \
        "before the store=9311ea4" "batch 1: peer=40ae7ec" "batch 2: capacity, agreement, large-scale=cf1031a" \
        "batch 3a: tas=66a7dec" "batch 3: the rest=INDEX" --out results/store/tracked.json

Each argument is LABEL=REV; REV INDEX is what is staged now (its tree is written with `git write-tree`), so the
commit that removes a batch can carry its own row. Sizes are the blobs' sizes in that tree: what a fresh clone
holds under results/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def _row(label: str, rev: str) -> dict:
    tree = _git("write-tree").strip() if rev == "INDEX" else _git("rev-parse", f"{rev}^{{tree}}").strip()
    sizes = [int(line.split()[3]) for line in _git("ls-tree", "-r", "-l", tree, "--", "results").splitlines()]
    commit = "staged" if rev == "INDEX" else _git("rev-parse", "--short=7", rev).strip()
    return {"stage": label, "commit": commit, "tree": tree[:12], "files": len(sizes), "mib": sum(sizes) / 2**20}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stages", nargs="+", metavar="LABEL=REV")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = [_row(*stage.rsplit("=", 1)) for stage in args.stages]
    args.out.write_text(json.dumps({"command": "benchmarks/scripts/store/tracked-size.py", "head": _git("rev-parse", "--short=7", "HEAD").strip(),
                                    "rows": rows}, indent=1) + "\n")
    for row in rows:
        print(f"{row['stage']:<50} {row['commit']:>7} {row['files']:>5} files {row['mib']:7.1f} MiB")


if __name__ == "__main__":
    main()
