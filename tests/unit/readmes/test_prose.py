"""Figures in prose, outside the rendered blocks, are listed on purpose: what counts as a figure, what its key
survives, and that the repository's READMEs hold no figure docs/unbacked-figures.txt does not list."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli import readme
from harness.readmes import prose, rendering

ROOT = Path(__file__).parents[3]

BLOCK = """<!-- table: rows
limit: 18.8
-->
| wall | 18.8 s |
<!-- end table -->"""


def tokens(text: str) -> list[str]:
    return [figure.token for figure in prose.find(text, "x.md")]


@pytest.mark.parametrize("text, expected", [
    ("Ready in 18.8 s with bulk loading.", ["18.8 s"]),
    ("a cycle of 18.8 ms, 18.8s, 7 µs", ["18.8 ms", "18.8s", "7 µs"]),
    ("1,725 Workloads, 99.70 %, 12%, 20x, +20%, -5 s, 1.5 GiB, 300/s, 2 cores", ["1,725", "99.70 %", "12%", "20x",
                                                                               "+20%", "-5 s", "1.5 GiB", "300/s",
                                                                               "2 cores"]),
    ("at 100k nodes, pending 1k..16k, ratio 1.01-1.02", ["100k", "1k", "16k", "1.01", "1.02"]),
    ("**18.8 s** (18.8 s), [18.8 s](x.md)", ["18.8 s", "18.8 s", "18.8 s"]),
    ("# 100 random cases\n## 2. Reading\n1. took 5 s\n  2) and 6 s", ["100", "5 s", "6 s"]),
    (f"before 1 s\n\n{BLOCK}\nafter 2 s", ["1 s", "2 s"]),
    ("`18.8 s` and ``a `18.8` b`` and `kqbench\nrun --count 5`", []),
    ("```\n18.8 s\n```\n~~~yaml\nlimit: 18.8\n~~~\n````\n```\n5\n````", []),
    ("Run:\n\n    kqbench run quick --repeat 3\n    --count 5\n\nthen 7 s", ["7 s"]),
    ("a list\n    continued at 4 s", ["4 s"]),
    ("[the run](results/run-18/case-5.md), <https://example.org/18>, http://host:5557/x", []),
    ("<!-- 18.8 s -->, <!-- a\n5 s\n-->, note[^1]", []),
    ("Kueue v0.17.0, v0.19, Kubernetes v1.35.4, Go 1.26, Python >= 3.11, Python 3.11.7, 10.0.0.5", []),
    ("on 2026-11-30 at 18:50 UTC (00:52-02:38), run 20261201-070901, 2026-12", []),
    ("git 6d6d650 and 9311ea4, git\n1320463, mode 0600", []),
    ("issue #13159, fixed in (#11502)", []),
    ("r0, k8s, v1beta2, p99, case-057, nightly-100k-20261202, x86_64, top_10", []),
])
def test_what_a_figure_is(text, expected):
    assert tokens(text) == expected


def test_a_figure_says_its_line_and_its_words_around():
    [figure] = prose.find("# Bring-up\n\nnodes (Ready in **18.8 s** with bulk\nloading).\n", "README.md")
    assert (figure.line, figure.token) == (3, "18.8 s")
    assert figure.context == "nodes (ready in **_** with bulk loading)."
    assert figure.message().startswith('README.md:3: "18.8 s" is a figure outside any rendered block: render it ')
    assert "`kqbench readme --list-unbacked`" in figure.message()


def test_the_key_survives_lines_inserted_above_and_a_neighbour_fixed_but_not_the_figure_changed():
    text = "Intro.\n\nBring-up took 18.8 s on 2 cores, then 3 s.\n"
    [key, *_] = [f.key for f in prose.find(text, "README.md")]
    moved = prose.find("A new paragraph with 5 figures.\n\n" + text, "README.md")
    assert [f.line for f in moved if f.token == "18.8 s"] == [5]
    assert key in [f.key for f in moved]
    assert key in [f.key for f in prose.find(text.replace("2 cores", "4 cores"), "README.md")]
    changed = prose.find(text.replace("18.8 s", "12.8 s"), "README.md")
    assert key not in [f.key for f in changed]
    in_ms = prose.find(text.replace("18.8 s", "18.8 ms"), "README.md")
    assert ("README.md", "18.8 ms", key[2]) in [f.key for f in in_ms], "the unit is the token's, not the context's"


def test_a_figure_listed_once_and_written_twice_is_new_once_and_an_unlisted_one_is_stale():
    figures = prose.find("| 5 s |\n| 5 s |\n", "a.md")
    listed = Counter({figures[0].key: 1, ("a.md", "7 s", "_"): 1, ("b.md", "9 s", "_"): 1})
    comparison = prose.compare(figures, listed, ["a.md"])
    assert [f.line for f in comparison.new] == [2]
    assert (comparison.stale, comparison.listed) == (1, 1), "b.md was not checked"


def test_the_list_reads_back_what_it_wrote_and_a_bad_line_says_where():
    keys = [("b.md", "5 s", "took _ here"), ("a.md", "1,000", "_ nodes"), ("a.md", "1,000", "_ nodes")]
    text = prose.listing(keys)
    assert text.startswith("# ") and text.splitlines()[4] == "a.md\t1,000\t_ nodes"
    assert prose.parse(text) == Counter(keys)
    assert prose.merge(prose.parse(text), prose.find("now 7 s", "b.md"), ["b.md"]) == Counter(
        {("a.md", "1,000", "_ nodes"): 2, ("b.md", "7 s", "now _"): 1})
    bad = len(text.splitlines()) + 1
    with pytest.raises(prose.ListError, match=rf"^docs/unbacked-figures.txt:{bad}: expected path<TAB>token<TAB>"):
        prose.parse(text + "a.md 5 s\n")


def _repository() -> dict[str, str]:
    return {rendering.name_of(path, ROOT): path.read_text() for path in rendering.readmes(ROOT)}


def test_every_figure_outside_the_blocks_is_listed():
    texts = _repository()
    comparison = prose.compare(prose.unbacked(texts), prose.parse((ROOT / prose.LIST).read_text()), texts)
    assert not comparison.new, "\n".join(figure.message() for figure in comparison.new)


def test_a_real_figure_of_the_readme_changed_by_hand_is_new():
    text = (ROOT / "README.md").read_text()
    lines = text.split("\n")
    figure = next(f for f in prose.find(text, "README.md")
                  if "." in f.token and lines[f.line - 1].count(f.token) == 1)
    changed = re.sub(r"\d", lambda digit: str((int(digit[0]) + 6) % 10), figure.token, count=1)
    lines[figure.line - 1] = lines[figure.line - 1].replace(figure.token, changed)
    comparison = prose.compare(prose.find("\n".join(lines), "README.md"),
                               prose.parse((ROOT / prose.LIST).read_text()), ["README.md"])
    assert [(f.line, f.token) for f in comparison.new] == [(figure.line, changed)]
    assert comparison.stale == 1


def test_check_fails_on_a_new_figure_in_prose_and_names_it(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# x\n\nReady in 18.8 s with bulk loading.\n")
    listed = CliRunner().invoke(readme.command, ["--root", str(tmp_path), "--list-unbacked"])
    assert listed.exit_code == 0, listed.output
    assert CliRunner().invoke(readme.command, ["--root", str(tmp_path), "--check"]).output == (
        "1 figures outside rendered blocks in 1 READMEs, all listed in docs/unbacked-figures.txt\n")
    (tmp_path / "README.md").write_text("# x\n\nReady in 12.8 s with bulk loading.\n")
    result = CliRunner().invoke(readme.command, ["--root", str(tmp_path), "--check"])
    assert result.exit_code != 0
    assert result.output.splitlines() == [
        prose.find("\n\nReady in 12.8 s with bulk loading.", "README.md")[0].message(),
        "1 figure(s) in docs/unbacked-figures.txt no longer in the READMEs: `kqbench readme --list-unbacked` "
        "rewrites the list"]
    assert "1 figure(s) outside rendered blocks that docs/unbacked-figures.txt does not list" in str(result.exception)
