"""`kqbench readme`: the tables of figures in the READMEs, made again from the committed result files."""

from __future__ import annotations

import difflib
from pathlib import Path

import click

from harness.errors import KqbenchError
from harness.readmes import rendering


@click.command("readme")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--root", type=click.Path(exists=True, file_okay=False, path_type=Path), default=Path("."),
              show_default=True, help="The repository (READMEs and docs pages are found under it when no PATHS "
                                      "are given).")
@click.option("--check", is_flag=True, help="Write nothing; print the difference and fail when a table is not "
                                            "what its files say.")
def command(paths: tuple[Path, ...], root: Path, check: bool) -> None:
    """Render every table block (<!-- table: NAME ... --> ... <!-- end table -->) of README.md, docs/*.md
    and results/**/README.md, or of PATHS, from the files its spec names."""
    root = root.resolve()
    stale = []
    for path in [p.resolve() for p in paths] or rendering.readmes(root):
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
