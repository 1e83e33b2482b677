"""What a README links to is in every clone: a link to a file results/.gitignore leaves to the results store would
be dead on a fresh checkout (a figure a README shows stays in git)."""

from __future__ import annotations

import re
from pathlib import Path

from harness.readmes import rendering
from harness.results import keeping

ROOT = Path(__file__).parents[3]
LINK = re.compile(r"\]\((?!\w+://|mailto:|#)([^)\s#]+)")


def links(root: Path) -> list[tuple[str, Path]]:
    """(README, target) of every relative link in the READMEs and docs pages."""
    found = []
    for readme in rendering.readmes(root):
        for match in LINK.finditer(readme.read_text()):
            found.append((str(readme.relative_to(root)), (readme.parent / match.group(1)).resolve()))
    return found


def test_the_link_pattern_takes_relative_links_only():
    text = "[a](pace/pace.png) ![b](../x.md#part) [c](https://example.org/x) [d](#here)"
    assert LINK.findall(text) == ["pace/pace.png", "../x.md"]


def test_every_link_of_a_readme_leads_to_a_file_git_keeps():
    found = links(ROOT)
    assert len(found) >= 40, "the READMEs link to their runs and to each other"
    dead = [f"{readme} -> {target.relative_to(ROOT)}" for readme, target in found if not target.exists()]
    assert not dead, f"links to nothing: {dead}"
    files = {str(target.relative_to(ROOT)): readme for readme, target in found if target.is_file()}
    left_out = keeping.ignored(ROOT, files)
    assert not left_out, ("links to files only the results store keeps (absent from a fresh clone; keep the file in "
                          f"git through results/.gitignore, or link its run folder): "
                          f"{sorted(f'{files[name]} -> {name}' for name in left_out)}")
