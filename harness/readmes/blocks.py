"""Tables of figures in Markdown, between markers that say how to render them (pure: text in, text out).

A block is an HTML comment that names a table and its inputs in YAML, the rendered table, and an end
marker; Markdown viewers show only the table:

    <!-- table: jobs-cases
    run: kueue-workers-10k-20261201-070901
    columns: {reference: "implementation=reference,r0", Kueue: "implementation=kueue,r0"}
    rows: [wall, pods_bound]
    -->
    | | reference | Kueue |
    ...
    <!-- end table -->

`render` replaces what is between the markers by what the named builder makes of the spec, so a
figure in a block can only be what the committed files say (harness.readmes.rendering checks every
README against this).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.errors import KqbenchError

_START = re.compile(r"^<!-- table: (?P<name>[a-z0-9-]+)[ \t]*$")
_SPEC_END = "-->"
_END = "<!-- end table -->"

Builder = Callable[[dict, Path], str]
"""(the spec, the README's folder, which paths in the spec are relative to) -> the table's Markdown."""


class BlockError(KqbenchError):
    """A block that cannot be rendered; the message starts with file:line."""


@dataclass(frozen=True, slots=True)
class Block:
    name: str
    spec: dict
    line: int
    """1-based line of the start marker."""
    body_start: int
    body_end: int
    """Line indexes (0-based, end exclusive) of the rendered part."""


def find(text: str, source: str) -> list[Block]:
    """Every block of a Markdown text, in order; a BlockError names file:line of a malformed one."""
    lines = text.split("\n")
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        match = _START.match(lines[i])
        if not match:
            if lines[i].strip() == _END:
                raise BlockError(f"{source}:{i + 1}: an end marker without a table before it")
            i += 1
            continue
        start = i
        try:
            spec_end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == _SPEC_END)
            end = next(j for j in range(spec_end + 1, len(lines)) if lines[j].strip() == _END)
        except StopIteration:
            raise BlockError(f"{source}:{start + 1}: table {match['name']!r} has no `-->` or no `{_END}` after it") from None
        try:
            spec = yaml.safe_load("\n".join(lines[start + 1:spec_end])) or {}
        except yaml.YAMLError as error:
            raise BlockError(f"{source}:{start + 1}: table {match['name']!r}: its spec is not YAML: "
                             f"{str(error).splitlines()[0]}") from None
        if not isinstance(spec, dict):
            raise BlockError(f"{source}:{start + 1}: table {match['name']!r}: its spec is a mapping")
        blocks.append(Block(match["name"], spec, start + 1, spec_end + 1, end))
        i = end + 1
    return blocks


def render(text: str, source: str, builders: dict[str, Builder], folder: Path) -> str:
    """The text with every block's table made again by its builder (paths in specs are under folder)."""
    lines = text.split("\n")
    out: list[str] = []
    done = 0
    for block in find(text, source):
        builder = builders.get(block.name)
        if builder is None:
            raise BlockError(f"{source}:{block.line}: no table named {block.name!r} (known: {', '.join(sorted(builders))})")
        try:
            table = builder(block.spec, folder)
        except (KqbenchError, KeyError, ValueError, OSError) as error:
            raise BlockError(f"{source}:{block.line}: table {block.name!r}: {error}") from None
        out += lines[done:block.body_start]
        out += table.split("\n")
        done = block.body_end
    out += lines[done:]
    return "\n".join(out)
