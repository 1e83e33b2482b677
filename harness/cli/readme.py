"""`kqbench readme`: the tables of figures in the READMEs, made again from the committed result files."""

from __future__ import annotations

import difflib
from pathlib import Path

import click

from harness.errors import KqbenchError
from harness.progress import LineProgress
from harness.readmes import rendering
from harness.results import manifests, storing, stores


@click.command("readme")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The repository (READMEs and docs pages are found under it when no PATHS "
                                      "are given).")
@click.option("--check", is_flag=True, help="Write nothing; print the difference and fail when a table is not "
                                            "what its files say.")
@click.option("--full", is_flag=True, help="First pull the raw data of every pushed run under each README's folder "
                                           "(kqbench results pull), so that blocks reading raw tables render too.")
def command(paths: tuple[Path, ...], root: Path, check: bool, full: bool) -> None:
    """Render every table block (<!-- table: NAME ... --> ... <!-- end table -->) of README.md, docs/*.md
    and results/**/README.md, or of PATHS, from the files its spec names."""
    root = root.resolve()
    stale = []
    readmes = [p.resolve() for p in paths] or rendering.readmes(root)
    if full:
        _pull_runs_under(readmes, root)
    for path in readmes:
        before = path.read_text()
        after = rendering.render_file(path, root)
        if after == before:
            continue
        stale.append(path)
        if check:
            name = rendering.name_of(path, root)
            click.echo("".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), name, name)))
        else:
            path.write_text(after)
            click.echo(f"rendered {rendering.name_of(path, root)}")
    if check and stale:
        raise KqbenchError(f"{len(stale)} README(s) with tables that are not what their files say: run `kqbench readme`")


def _pull_runs_under(readmes: list[Path], root: Path) -> None:
    """Every pushed run (a folder with a manifest) under results/ and a README's folder, its missing files restored
    (not results/runs/: git ignores those, no README reads them)."""
    pushed = [m.parent for m in (root / "results").rglob(manifests.FILE_NAME)
              if (root / "results" / "runs") not in m.parents]
    folders = {f for f in pushed if any(f.is_relative_to(readme.parent) for readme in readmes)}
    if not folders:
        return
    store, progress, restored = stores.open_store(), LineProgress(interval=5.0), 0
    for folder in sorted(folders):
        restored += len(storing.pull(folder, store, progress=progress).restored)
    click.echo(f"pulled {restored} files of {len(folders)} pushed runs from {store.address}", err=True)
