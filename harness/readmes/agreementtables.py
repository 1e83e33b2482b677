"""README tables of a differential run (`kqbench agree`), from its `summary.json`.

Spec of an `agreement-pairs` block (paths relative to the README):

    run: ../results/agreement/random-300
    names: {reference: reference, kueue: Kueue v0.17.0}     # implementation -> how the table names it

One row for the two implementations against each other, then, when the run confirmed its differences
(the disagreeing cases run again in a batch of their own), the same pair counting only the differences
that came back; then one per implementation against its own repeat: decisions compared, agreeing, the
rate, and the cases that agree entirely.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness.readmes import inputs, markdown


def pairs(spec: dict, folder: Path) -> str:
    path = folder / spec["run"] / "summary.json"
    if not path.is_file():
        raise inputs.missing(path)
    summary = json.loads(path.read_text())
    a, b = summary["implementations"]
    names = {a: a, b: b, **(spec.get("names") or {})}

    def row(label: str, figures: dict) -> list[str]:
        return [label, markdown.number(figures["decisions"]), markdown.number(figures["agreeing"]),
                f"{figures['rate'] * 100:.2f} %", f"{figures['cases_agreeing']} / {figures['cases']}"]

    rows = [row(f"{names[a]} / {names[b]}", summary["cross"])]
    if confirmed := _confirmed(summary):
        rows.append(row(f"{names[a]} / {names[b]}, differences confirmed", confirmed))
    # A run of one repeat per implementation compares nothing with itself: no row.
    rows += [row(f"{names[name]} / itself", summary["self"][name]) for name in (a, b)
             if summary["self"].get(name, {}).get("rate") is not None]
    return markdown.table(["pair", "decisions", "agreeing", "rate", "cases agreeing entirely"], rows)


def _confirmed(summary: dict) -> dict | None:
    """The cross figures counting only the differences that came back in the confirmation batch."""
    confirmation, cross = summary.get("confirmation"), summary["cross"]
    if not confirmation or confirmation.get("rate_after_confirmation") is None:
        return None
    agreeing = cross["agreeing"] + confirmation.get("decisions_differing_only_in_the_big_batch", 0)
    gone = sum(1 for case in confirmation["cases"] if not case["reproduced"] and not case["rerun_failed"])
    return {"decisions": cross["decisions"], "agreeing": agreeing, "rate": confirmation["rate_after_confirmation"],
            "cases_agreeing": cross["cases_agreeing"] + gone, "cases": cross["cases"]}
