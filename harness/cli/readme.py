"""`kqbench readme`: the tables of figures in the READMEs, made again from the committed result files."""

from __future__ import annotations

import difflib
from collections import Counter
from pathlib import Path

import click

from harness.errors import KqbenchError
from harness.progress import LineProgress
from harness.readmes import prose, rendering
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
@click.option("--list-unbacked", is_flag=True, help=f"Render nothing; write {prose.LIST}, the figures outside "
                                                    "rendered blocks (of PATHS only, when given), which --check "
                                                    "then accepts.")
def command(paths: tuple[Path, ...], root: Path, check: bool, full: bool, list_unbacked: bool) -> None:
    """Render every table block (<!-- table: NAME ... --> ... <!-- end table -->) of README.md, docs/*.md
    and results/**/README.md, or of PATHS, from the files its spec names; --check also fails on a figure
    outside the blocks that docs/unbacked-figures.txt does not list."""
    root = root.resolve()
    stale = []
    readmes = [p.resolve() for p in paths] or rendering.readmes(root)
    if list_unbacked:
        if check or full:
            raise click.UsageError("--list-unbacked renders nothing: give it without --check and --full")
        _list_unbacked(readmes, root, others=_listed(root) if paths else Counter())
        return
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
    if not check:
        return
    problems = []
    if stale:
        problems.append(f"{len(stale)} README(s) with tables that are not what their files say: run `kqbench readme`")
    if new := _check_unbacked(readmes, root):
        problems.append(f"{new} figure(s) outside rendered blocks that {prose.LIST} does not list")
    if problems:
        raise KqbenchError("; ".join(problems))


def _figures(readmes: list[Path], root: Path) -> list[prose.Figure]:
    return prose.unbacked({rendering.name_of(path, root): path.read_text() for path in readmes})


def _listed(root: Path) -> Counter[prose.Key]:
    path = root / prose.LIST
    return prose.parse(path.read_text()) if path.is_file() else Counter()


def _list_unbacked(readmes: list[Path], root: Path, others: Counter[prose.Key]) -> None:
    """Write the list: the READMEs' figures, and what `others` holds for other files."""
    figures = _figures(readmes, root)
    listed = prose.merge(others, figures, (rendering.name_of(path, root) for path in readmes))
    (root / prose.LIST).write_text(prose.listing(listed.elements()))
    for source, count in Counter(figure.source for figure in figures).most_common():
        click.echo(f"{count:6,} {source}")
    click.echo(f"wrote {prose.LIST}: {listed.total():,} figures outside rendered blocks")


def _check_unbacked(readmes: list[Path], root: Path) -> int:
    """Print each figure the list lacks and the list's stale count; how many are new."""
    comparison = prose.compare(_figures(readmes, root), _listed(root), (rendering.name_of(p, root) for p in readmes))
    for figure in comparison.new:
        click.echo(figure.message())
    if comparison.stale:
        click.echo(f"{comparison.stale} figure(s) in {prose.LIST} no longer in the READMEs: "
                   f"`kqbench readme --list-unbacked` rewrites the list")
    if not comparison.new:
        click.echo(f"{comparison.listed:,} figures outside rendered blocks in {len(readmes)} READMEs, "
                   f"all listed in {prose.LIST}")
    return len(comparison.new)


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
