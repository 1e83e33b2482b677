"""Figures in a README's prose, outside the rendered table blocks: found, listed and compared (pure: text in, data
out).

A figure in a block cannot drift (`kqbench readme --check` renders it again); one in the prose around it can.
These are listed in docs/unbacked-figures.txt, and a figure not in that list fails the check, so a new or changed
number in prose is either rendered from data or listed on purpose. The rules, kept simple and deterministic:

- Not read: table blocks (spec comment and rendered body), ``` and ~~~ fences, indented code (4+ spaces after a
  blank line, until a line indented less), `code spans`, HTML comments, link targets `](...)`, URLs, footnotes.
- A figure is a number (sign, thousands commas, decimals) with its unit kept when attached or one space away
  (18.8 s, 2.5 MiB, 20x, 99.7 %, 100k), not touching a letter or digit on either side.
- Not figures: versions (v0.17.0, N.N.N, Go 1.26, Python 3.11), dates and times (2026-11-30, 20261201-070901,
  18:50), shas (7-40 hex with a digit and a letter, or digits after `git`), issues (#13159), zero-padded
  numbers (0600), digits inside words and paths (r0, k8s, p99, nightly-100k), ordered-list markers and heading
  numbering (`1. `).
- A figure's key is its file, its token and the context: up to three words either side, lowercased, every other
  number in them replaced by `#` (fixing a neighbour does not unlist it), the figure itself `_`. No line number:
  lines inserted above leave the key as it was; a figure whose key appears more often than listed is new.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from harness.errors import KqbenchError
from harness.readmes import blocks

LIST = "docs/unbacked-figures.txt"
"""The committed list, under the repository."""

CONTEXT_WORDS = 3
"""Words either side of a figure in its key: enough to tell apart two equal figures in a file, few enough that an
edit a sentence away leaves it listed."""

_HEADER = """\
# Figures in the READMEs outside any rendered table block: numbers nothing renders again from data.
# `kqbench readme --check` fails on one that is not listed here (harness/readmes/prose.py says what a figure is).
# Regenerate after checking the new ones are not measurements: kqbench readme --list-unbacked
# One line per figure: path<TAB>token<TAB>context (its words around, other numbers as #, itself as _).
"""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_HIDDEN = re.compile(r"""
    <!--.*?-->                                          # HTML comment
  | (?<!`)(?P<ticks>`+)(?!`)(?:[^\n]|\n(?![ \t]*\n))+?(?<!`)(?P=ticks)(?!`)   # code span, within a paragraph
  | \]\([^)\n]*\)                                        # link target
  | <?\b(?:https?|ftp)://[^\s)>]+>?                      # URL
  | \[\^[^\]\n]*\]                                       # footnote
""", re.S | re.X)

_UNITS_ATTACHED = r"%|×|x|/s|ms|µs|us|ns|mins|min|s|h|KiB|MiB|GiB|TiB|Ki|Mi|Gi|kB|KB|MB|GB|TB|B|k|M|m"
_UNITS_SPACED = (r"%|/s|ms|µs|ns|s|secs?|seconds?|mins?|minutes?|h|hours?|days?|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB"
                 r"|bytes|cores?|CPUs?")
_TOKENS = re.compile(rf"""
    ^[ \t]*(?:>[ \t]*)*\d+[.)](?=[ \t])                  # ordered-list marker
  | ^\#{{1,6}}[ \t]+\d+(?:\.\d+)*[.)](?=[ \t])           # heading numbering
  | \b(?:Go|Python)[ \t]*(?:[<>]=?|==?)?[ \t]*\d+(?:\.\d+)+   # a language's version
  | \bgit\s+\d{{7,40}}(?!\w)                             # a sha of digits only
  | [^\W\d]\w*(?:[-./:]\w+)*                             # a word, an identifier, a path, v0.17.0
  | (?:19|20)\d{{2}}-[01]\d(?:-[0-3]\d)?(?!\d)           # date
  | (?:19|20)\d{{2}}[01]\d[0-3]\d(?:-\d{{4,6}})?(?!\w)   # date stamp, run id
  | \d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\.\d+)?(?!\d)       # time
  | \d+(?:\.\d+){{2,}}                                   # version
  | (?=[0-9a-f]*[a-f])\d[0-9a-f]{{6,39}}(?!\w)           # sha
  | \#\d+                                                # issue
  | 0\d+(?!\w)                                           # zero-padded: a file mode, an id
  | (?<![^\W_])(?<!:)(?P<figure>
        (?:(?<![^\s(\[])[-+−](?=\d))?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)(?:\.\d+)?
        (?:(?:{_UNITS_ATTACHED})(?![^\W_])|[ \u00a0\u202f](?:{_UNITS_SPACED})(?![^\W_]))?
    )(?![^\W_]|[.,]\d)
""", re.M | re.X)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")

Key = tuple[str, str, str]
"""(path, token, context): a figure as the list holds it."""


class ListError(KqbenchError):
    """A malformed line in the list; the message starts with file:line."""


@dataclass(frozen=True, slots=True)
class Figure:
    source: str
    """The README's path under the repository."""
    line: int
    """1-based."""
    token: str
    """As written, unit included: `18.8 s`."""
    context: str

    @property
    def key(self) -> Key:
        return self.source, self.token, self.context

    def message(self) -> str:
        """One line naming it and both ways out."""
        return (f'{self.source}:{self.line}: "{self.token}" is a figure outside any rendered block: render it from '
                f"data in a table block, or if it is not a measurement run `kqbench readme --list-unbacked` and "
                f"commit {LIST}")


@dataclass(frozen=True, slots=True)
class Comparison:
    new: list[Figure]
    """In the READMEs more often than in the list, in file order."""
    stale: int
    """Listed more often than the READMEs hold them."""
    listed: int
    """Figures the READMEs hold that the list has (the count the check prints)."""


def find(text: str, source: str) -> list[Figure]:
    """Every figure of a Markdown text outside blocks, code, comments and link targets, in order."""
    shown = _HIDDEN.sub(lambda m: re.sub(r"[^\n]", " ", m[0]), _hide_lines(text, source))
    words = [m.span() for m in re.finditer(r"\S+", shown)]
    ends = [end for _, end in words]
    newlines = [i for i, c in enumerate(shown) if c == "\n"]
    figures = []
    for match in _TOKENS.finditer(shown):
        if match["figure"] is None:
            continue
        start, end = match.span("figure")
        first, last = bisect.bisect_right(ends, start), bisect.bisect_right(ends, end - 1)
        around = [shown[s:e] for s, e in words[max(0, first - CONTEXT_WORDS):first]]
        around.append(shown[words[first][0]:start] + "\0" + shown[end:words[last][1]])
        around += [shown[s:e] for s, e in words[last + 1:last + 1 + CONTEXT_WORDS]]
        context = _NUMBER.sub("#", " ".join(around).lower()).replace("\0", "_")
        figures.append(Figure(source, bisect.bisect_left(newlines, start) + 1, match["figure"], context))
    return figures


def unbacked(texts: dict[str, str]) -> list[Figure]:
    """The figures of every README ({path under the repository: its text}), file by file."""
    return [figure for source, text in texts.items() for figure in find(text, source)]


def listing(keys: Iterable[Key]) -> str:
    """The list's text: the header, then one sorted line per figure."""
    return _HEADER + "".join(f"{path}\t{token}\t{context}\n" for path, token, context in sorted(keys))


def parse(text: str) -> Counter[Key]:
    """The figures a list holds, each as often as it is listed."""
    keys: Counter[Key] = Counter()
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise ListError(f"{LIST}:{number}: expected path<TAB>token<TAB>context, got {line!r}: "
                            f"run `kqbench readme --list-unbacked`")
        keys[fields[0], fields[1], fields[2]] += 1
    return keys


def compare(figures: list[Figure], listed: Counter[Key], sources: Iterable[str]) -> Comparison:
    """The READMEs' figures against the list, for the given READMEs only; of a key found more often than listed,
    the last occurrences count as new."""
    sources = set(sources)
    listed = Counter({key: n for key, n in listed.items() if key[0] in sources})
    found = Counter(figure.key for figure in figures)
    seen: Counter[Key] = Counter()
    new = []
    for figure in reversed(figures):
        seen[figure.key] += 1
        if seen[figure.key] > listed[figure.key]:
            new.append(figure)
    return Comparison(new[::-1], (listed - found).total(), (found & listed).total())


def merge(listed: Counter[Key], figures: list[Figure], sources: Iterable[str]) -> Counter[Key]:
    """The list with the given READMEs' entries replaced by their current figures."""
    sources = set(sources)
    kept = Counter({key: n for key, n in listed.items() if key[0] not in sources})
    return kept + Counter(figure.key for figure in figures)


def _hide_lines(text: str, source: str) -> str:
    """The text with the lines of blocks, fences and indented code blanked (line count kept)."""
    lines = text.split("\n")
    hidden = [False] * len(lines)
    for block in blocks.find(text, source):
        hidden[block.line - 1:block.body_end + 1] = [True] * (block.body_end + 2 - block.line)
    fence, code = "", False
    for i, line in enumerate(lines):
        if fence:
            hidden[i] = True
            if line.strip().startswith(fence) and not line.strip().lstrip(fence[0]):
                fence = ""
        elif (match := _FENCE.match(line)) and not hidden[i]:
            hidden[i], fence = True, match[1]
        elif _INDENTED.match(line) and line.strip() and (code or i == 0 or not lines[i - 1].strip()):
            hidden[i] = code = True
        elif line.strip():
            code = False
    return "\n".join("" if hide else line for line, hide in zip(lines, hidden))
