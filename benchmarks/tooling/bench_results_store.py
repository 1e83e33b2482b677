"""Benchmark: the results store's push and pull of real run folders, on a folder store and on S3 (versitygw).

Each --folder (a committed run folder) is copied first into a temporary folder, so the checkout is never
touched. For each backend (`folder`: a FolderStore in a fresh temporary folder; `s3`: a fresh bucket on a
versitygw over a temporary folder, started here on a loopback port and stopped at the end, also on an error
or Ctrl-C), --repeat times, each time on a fresh store, it times `storing.push` with every object new
(`push-new`), `storing.push` again with nothing new (`push-again`: hashing and existence checks only), and
`storing.pull` of every file into an empty copy holding only the manifest (`pull`), whose files must then be
byte-identical (sha256) to the folder's. Everything runs on one disk with a warm page cache (the copy was
just written), on the client side single-threaded, as `kqbench results push/pull` do. Writes --out: git sha,
the exact command, the machine, the folders, and one flat record per (folder, backend, step): median, min and
max seconds, files, MiB, MiB/s at the median.

    .venv/bin/kqbench results pull results/peer/kueue-baseline-full-hold   # its raw data left the tree
    .venv/bin/python benchmarks/tooling/bench_results_store.py --folder results/baselines/make-bench-20261204-203847 \
        --folder results/peer/kueue-baseline-full-hold --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

import minio

from harness.results import manifests, runs, s3serving, stores, storing
from scheduler import listening

RESULT_VERSION = 1
"""store.json format. 1: first format."""
BACKENDS = ("folder", "s3")
STEPS = ("push-new", "push-again", "pull")


def fresh_store(backend: str, name: str, scratch: Path, server: s3serving.Server) -> stores.Store:
    """An empty store of backend (s3: a new bucket on server), opened by address as `kqbench results` does."""
    if backend == "folder":
        return stores.open_store(str(scratch / "stores" / name))
    minio.Minio(f"{listening.LOOPBACK}:{server.port}", s3serving.ACCESS, s3serving.SECRET, secure=False).make_bucket(name)
    return stores.open_store(server.address(name))


def digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): storing.sha256_of(p) for p in storing.folder_files(folder)}


Sample = dict[str, tuple[float, int | None]]
"""A step's seconds and the objects it wrote (None for a pull), by step."""


def measure(folder: Path, expected: dict[str, str], store: stores.Store, clone: Path) -> Sample:
    """Seconds and new objects of each step on one fresh store; the pull into clone checked byte for byte."""
    (folder / manifests.FILE_NAME).unlink(missing_ok=True)  # the last repeat's, naming another store
    started = time.perf_counter()
    first = storing.push(folder, store)
    pushed = time.perf_counter()
    again = storing.push(folder, store)
    repushed = time.perf_counter()
    if again.new_objects:
        raise SystemExit(f"the second push into {store.address} wrote {again.new_objects} objects; expected none")
    clone.mkdir(parents=True)
    shutil.copy(folder / manifests.FILE_NAME, clone / manifests.FILE_NAME)
    before_pull = time.perf_counter()
    storing.pull(clone, store)
    pulled = time.perf_counter()
    if digests(clone) != expected:
        raise SystemExit(f"the pull from {store.address} into {clone} is not byte-identical to {folder}")
    return {"push-new": (pushed - started, first.new_objects), "push-again": (repushed - pushed, again.new_objects),
            "pull": (pulled - before_pull, None)}


def rows_of(label: str, backend: str, samples: list[Sample], files: int, size: int) -> list[dict]:
    rows = []
    for step in STEPS:
        seconds = [sample[step][0] for sample in samples]
        median = statistics.median(seconds)
        rows.append({"folder": label, "backend": backend, "step": step, "repeats": len(seconds),
                     "median_seconds": round(median, 4), "min_seconds": round(min(seconds), 4),
                     "max_seconds": round(max(seconds), 4), "files": files, "mib": round(size / 2**20, 2),
                     "mib_per_second": round(size / 2**20 / median, 1), "new_objects": samples[0][step][1]})
    return rows


def bench(sources: list[Path], repeat: int, scratch: Path, s3: s3serving.Server) -> tuple[list[dict], list[dict]]:
    folders, rows = [], []
    for index, source in enumerate(sources):
        folder = scratch / "copies" / source.name
        shutil.copytree(source, folder, symlinks=True)
        expected = digests(folder)
        size = sum(p.stat().st_size for p in storing.folder_files(folder))
        folders.append({"label": source.name, "path": source.as_posix(), "files": len(expected),
                        "mib": round(size / 2**20, 2), "distinct_contents": len(set(expected.values()))})
        for backend in BACKENDS:
            samples = []
            for n in range(repeat):
                name = f"runs-{index}-{backend}-{n}"
                print(f"[bench] {source.name}: {backend} repeat {n + 1}/{repeat}", file=sys.stderr, flush=True)
                store = fresh_store(backend, name, scratch, s3)
                samples.append(measure(folder, expected, store, scratch / "pulls" / name / source.name))
            rows += rows_of(source.name, backend, samples, len(expected), size)
    return folders, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, action="append",
                        help="A run folder to push and pull (repeatable; default: "
                             "results/baselines/make-bench-20261204-203847).")
    parser.add_argument("--repeat", type=int, default=3, help="Fresh stores per folder and backend.")
    parser.add_argument("--out", type=Path, default=Path("results/store/store.json"))
    args = parser.parse_args()
    sources = args.folder or [Path("results/baselines/make-bench-20261204-203847")]
    if bad := [str(s) for s in sources if not s.is_dir()]:
        raise SystemExit(f"not a folder: {', '.join(bad)}")
    command = " ".join([".venv/bin/python", os.path.relpath(__file__), *sys.argv[1:]])
    git_sha = runs.git_sha()  # at the start: others may commit while it runs
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a kill stops versitygw too, as Ctrl-C does
    os.environ |= s3serving.environment()  # how S3Store finds credentials
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-results-store-") as temporary:
        scratch = Path(temporary)
        with s3serving.serving(scratch / "buckets", buckets=()) as s3:
            folders, rows = bench(sources, args.repeat, scratch, s3)
    result = {"version": RESULT_VERSION, "git_sha": git_sha, "command": command, "machine": runs.machine(),
              "load_average_1m": {"before": round(load_before[0], 2), "after": round(os.getloadavg()[0], 2)},
              "repeat": args.repeat, "folders": folders, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for row in rows:
        print(f"{row['folder']:<45} {row['backend']:<6} {row['step']:<10} {row['median_seconds']:8.3f} s "
              f"{row['mib_per_second']:8.1f} MiB/s  ({row['files']} files, {row['mib']} MiB)")


if __name__ == "__main__":
    main()
