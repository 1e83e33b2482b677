"""`kqbench results push|pull|verify|ls|record-history`: raw run data in the results store, manifests in git."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.errors import KqbenchError
from harness.progress import LineProgress
from harness.results import keeping, storing, stores

_STORE = click.option("--store", "address", default=None, metavar="ADDRESS",
                      help=f"The store: a folder, s3://BUCKET/PREFIX or s3+http://HOST:PORT/BUCKET/PREFIX "
                           f"(default: ${stores.ADDRESS_VARIABLE}, else ~/.local/share/kqbench/store).")
_FOLDER = click.argument("folder", type=click.Path(exists=True, file_okay=False, path_type=Path))
_PATH = click.argument("path", type=click.Path(path_type=Path))  # may be a file that is not here yet


@click.group("results")
def group() -> None:
    """Raw run data (samples, scrape series, logs, reports) lives in the results store, named by sha256;
    each run folder's store-manifest.json, committed beside it, says where every file's bytes are."""


@group.command("push")
@_FOLDER
@_STORE
def push(folder: Path, address: str | None) -> None:
    """Upload FOLDER's files the store lacks and record every file in FOLDER/store-manifest.json."""
    store = stores.open_store(address)
    pushed = storing.push(folder, store, LineProgress(interval=2.0))
    click.echo(f"pushed {folder}: {pushed.files} files ({pushed.bytes / 2**20:.1f} MiB), {pushed.new_objects} new objects "
               f"({pushed.new_bytes / 2**20:.1f} MiB) to {store.address}; manifest: {pushed.manifest}")
    try:
        kept = keeping.kept_in_git(folder)
    except KqbenchError:  # kqbench installed outside its checkout: no results/.gitignore to ask
        return
    click.echo(f"git keeps {len(kept.files)} files ({kept.bytes / 1024:.0f} KiB) when the folder is committed under results/")


@group.command("pull")
@_PATH
@_STORE
@click.option("--force", is_flag=True, help="Replace local files whose bytes differ from their manifest's.")
def pull(path: Path, address: str | None, force: bool) -> None:
    """Restore the files the manifests name under PATH (a run folder, a topic folder or one file), from the store,
    else from git history; each is checked against its sha256 before it takes its place."""
    store = stores.open_store(address)
    pulled = storing.pull(path, store, None, force, LineProgress(interval=2.0))
    click.echo(f"restored {len(pulled.restored)} files ({pulled.bytes / 2**20:.1f} MiB); {pulled.present} were already there")


@group.command("verify")
@_PATH
@_STORE
@click.option("--deep", is_flag=True, help="Also download each object and check its sha256 (slow on a remote store).")
def verify(path: Path, address: str | None, deep: bool) -> None:
    """Check that every file the manifests name under PATH is whole: local copies, store objects, and places in
    git history for files only history holds (--deep: their bytes too)."""
    store = stores.open_store(address)
    checked, problems = storing.verify(path, store, deep, LineProgress(interval=2.0))
    for problem in problems:
        click.echo(f"{problem.file}: {problem.what}", err=True)
    if problems:
        raise KqbenchError(f"{len(problems)} of {checked} files have problems (above): push them again from a good copy")
    click.echo(f"verified {checked} files: local copies, store {store.address}, git history")


@group.command("ls")
@_PATH
@click.option("--budget", is_flag=True, help=f"Fail when git would keep more than {keeping.BUDGET_BYTES // 2**20} MiB of "
                                              "a run folder, naming the largest files.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every file, and per run folder the totals "
                                                      "(files and bytes, in the store, kept by git, the budget).")
def ls(path: Path, budget: bool, as_json: bool) -> None:
    """List the files the manifests name under PATH: size, whether git keeps it, where its bytes are."""
    runs, over = [], []
    for located in storing.locate(path):
        kept = keeping.kept_in_git(located.folder)
        names = {name for name, _ in kept.files}
        files = [{"path": e.path, "size": e.size, "here": (located.folder / e.path).is_file(), "git_keeps": e.path in names,
                  "in_store": e.in_store, "git": f"{e.git.commit}:{e.git.path}" if e.git else ""}
                 for e in located.entries]
        totals = {"files": len(files), "bytes": sum(f["size"] for f in files),
                  "store_files": sum(f["in_store"] for f in files),
                  "store_bytes": sum(f["size"] for f in files if f["in_store"]),
                  "git_files": len(kept.files), "git_bytes": kept.bytes, "git_budget_bytes": keeping.BUDGET_BYTES}
        shown = located.folder.relative_to(Path.cwd().resolve()) if located.folder.is_relative_to(Path.cwd().resolve()) else located.folder
        runs.append({"folder": str(shown), "totals": totals, "files": files})
        if budget and (message := kept.over_budget()):
            over.append(f"{located.folder}: {message}")
    if as_json:
        click.echo(json.dumps(runs if len(runs) != 1 else runs[0], indent=1))
    else:
        _print_files(runs)
    if over:
        raise KqbenchError("; ".join(over))


def _print_files(runs: list[dict]) -> None:
    table = Table()
    for column in ("file", "size", "here", "git keeps", "store", "git history"):
        table.add_column(column, overflow="fold")
    for run in runs:
        for f in run["files"]:
            table.add_row(f"{run['folder']}/{f['path']}", f"{f['size']:,}", "yes" if f["here"] else "",
                          "yes" if f["git_keeps"] else "", "yes" if f["in_store"] else "", f["git"][:12] + f["git"][40:])
    Console().print(table)
    for run in runs:
        t = run["totals"]
        click.echo(f"{run['folder']}: {t['files']} files ({t['bytes'] / 2**20:.1f} MiB); store {t['store_files']} "
                   f"({t['store_bytes'] / 2**20:.1f} MiB); git keeps {t['git_files']} ({t['git_bytes'] / 2**10:.0f} KiB of "
                   f"{t['git_budget_bytes'] / 2**10:.0f})")


@group.command("summarise")
@_FOLDER
def summarise(folder: Path) -> None:
    """Write FOLDER's summary.json again from its tables, as `kqbench run` does at its end: after a fix of how a
    driver summarises (or a run whose summary step failed); `kqbench report FOLDER` then draws its report."""
    from harness.drivers import registry
    from harness.results import runs, summaries, tables

    record = runs.read_run(folder)
    found = tables.read(folder)
    if not found:
        raise KqbenchError(f"{folder} has no tables here: `kqbench results pull {folder}` brings them from the store")
    summary = summaries.summarise(record, found, registry.drivers())
    written = summaries.write(folder, summary)
    click.echo(f"summary: {written} ({len(summary.entries)} metrics)")


@group.command("record-history")
@_FOLDER
@click.option("--untrack", is_flag=True,
              help="Then take the recorded files out of git's index (git rm --cached; the working copies stay).")
def record_history(folder: Path, untrack: bool) -> None:
    """Record FOLDER's git-tracked files that results/.gitignore does not keep (raw data committed before the store)
    with their place in history (HEAD and path) in its manifest, so that `kqbench results pull` restores them
    byte-identical from any full clone once they leave the tree. Run it at a commit that has landed."""
    leaving = keeping.record_leaving(folder, untrack, LineProgress(interval=2.0))
    click.echo(f"{len(leaving.names)} file{'' if len(leaving.names) == 1 else 's'} ({leaving.bytes / 2**20:.1f} MiB) recorded with their git history place "
               f"in {leaving.manifest}" + ("; taken out of the index (commit to take them out of the tree)"
                                           if leaving.untracked else ""))
