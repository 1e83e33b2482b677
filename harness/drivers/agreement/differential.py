"""A differential run: cases through implementations A and B, each run twice, compared.

Runs twice per implementation so that a decision that changes between two runs of the same
implementation is told apart from a disagreement (self-agreement beside cross-agreement).
Cases run side by side in batches (one cluster per batch, implementation and repeat).
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.agreeing import cases, comparing, decisions as decided, generating, rendering
from harness.agreeing.comparing import Comparison
from harness.drivers.agreement import batching, settings, shrinking

RECORD = "agreement.json"
"""What a differential run was: command, git sha, seeds, versions, machine (not a scenario's run.json)."""
SCHEMA_VERSION = 1
"""Version 1 of agreement.json, summary.json and decisions.jsonl of a differential run."""

RunBatch = Callable[[str, dict[str, cases.Case], str], dict[str, batching.Outcome]]
"""(implementation, prefix -> case, cluster name) -> outcomes; a scenario run per batch (``kqbench agree``)."""


@dataclass
class CaseResult:
    index: int
    case: cases.Case
    outcomes: dict[str, list[batching.Outcome]]
    """implementation -> one outcome per repeat (failed runs included)."""
    cross: Comparison | None
    """The first complete run of each implementation compared; None when one has none."""
    selves: dict[str, Comparison]
    """implementation -> its first two complete runs compared (where it has two)."""

    @property
    def failure(self) -> str | None:
        """Why the case could not be compared across implementations (None when it was)."""
        if self.cross is not None:
            return None
        return next((o.failure for runs in self.outcomes.values() for o in runs if o.failure), "not run")


def run(all_cases: list[cases.Case], implementations: tuple[str, str], repeats: int, batch_size: int,
        run_batch: RunBatch, say: Callable[[str], None] = print,
        on_batch: Callable[[list[CaseResult]], None] = lambda done: None) -> list[CaseResult]:
    """Every case through both implementations, ``repeats`` times each; ``on_batch`` gets the
    results of every case run so far after each batch (so an interrupted run keeps them)."""
    indexed = list(enumerate(all_cases))
    outcomes: dict[int, dict[str, list[batching.Outcome]]] = {i: {impl: [] for impl in implementations}
                                                             for i, _ in indexed}
    # A batch shares one scheduler, so cases that differ in its settings (fair sharing, waitForPodsReady)
    # go to batches of their own.
    groups: dict[settings.SchedulerSetting, list[tuple[int, cases.Case]]] = {}
    for i, case in indexed:
        groups.setdefault(settings.setting_of(case), []).append((i, case))
    batches = [group[start:start + batch_size] for group in groups.values()
               for start in range(0, len(group), batch_size)]
    tag = uuid.uuid4().hex[:4]  # two runs at once (a test and a benchmark) never share a cluster name
    for b, batch in enumerate(batches):
        by_prefix = {rendering.prefix_of(i): case for i, case in batch}
        for repeat in range(repeats):
            for impl in implementations:
                say(f"batch {b + 1}/{len(batches)} ({len(batch)} cases), {impl}, run {repeat + 1}/{repeats}")
                got = run_batch(impl, by_prefix, f"agree-{tag}-{impl[:3]}-{b}-{repeat}")
                for i, _ in batch:
                    outcomes[i][impl].append(got[rendering.prefix_of(i)])
        done = [i for chunk in batches[:b + 1] for i in chunk]
        on_batch([_result(i, case, outcomes[i], implementations) for i, case in done])
    return [_result(i, case, outcomes[i], implementations) for i, case in indexed]


def _result(index: int, case: cases.Case, outcomes: dict[str, list[batching.Outcome]],
            implementations: tuple[str, str]) -> CaseResult:
    complete = {impl: [o for o in outcomes.get(impl, []) if o.failure is None] for impl in implementations}
    a, b = implementations
    cross = comparing.compare(case, complete[a][0].decisions, complete[b][0].decisions) \
        if complete[a] and complete[b] else None
    selves = {impl: comparing.compare(case, runs[0].decisions, runs[1].decisions)
              for impl, runs in complete.items() if len(runs) > 1}
    return CaseResult(index, case, outcomes, cross, selves)


def summarize(results: list[CaseResult], implementations: tuple[str, str]) -> dict:
    """The figures of a run: cases, decisions compared, agreement rates, difference classes."""
    ran = [r for r in results if r.failure is None and r.cross is not None]

    def rate(comparisons: list[Comparison]) -> dict:
        total = sum(c.decisions for c in comparisons)
        agreeing = sum(c.agreeing for c in comparisons)
        orders = sum(c.orders for c in comparisons)
        return {"decisions": total, "agreeing": agreeing, "rate": agreeing / total if total else None,
                "orders": orders, "orders_agreeing": sum(c.orders_agreeing for c in comparisons),
                "cases_agreeing": sum(c.agrees and c.tie is None for c in comparisons), "cases": len(comparisons),
                # Added within schema version 1: a summary without them was written before ties were told apart.
                "cases_tied": sum(c.agrees and c.tie is not None for c in comparisons),
                "decisions_set_aside": sum(c.decisions_set_aside for c in comparisons)}

    classes: Counter[str] = Counter()
    ties: Counter[str] = Counter()
    examples: dict[str, int] = {}
    tie_examples: dict[str, int] = {}
    for r in ran:
        assert r.cross is not None
        # Only differences that each implementation reproduces in its own repeat count as disagreements.
        for d in _stable(r):
            classes[d.klass] += 1
            examples.setdefault(d.klass, r.index)
        tie = r.cross.tie
        for d in r.cross.set_aside:
            assert tie is not None
            ties[tie.klass(d)] += 1
            tie_examples.setdefault(tie.klass(d), r.index)

    def rows(decided: bool) -> list[dict]:
        return [{"class": k, "count": n, "example_case": examples[k]} for k, n in classes.most_common()
                if (k.split(":")[0] in comparing.DECISION_KINDS) is decided]

    return {
        "implementations": list(implementations),
        "cases": len(results), "cases_failed": len(results) - len(ran),
        "cross": rate([r.cross for r in ran if r.cross is not None]),
        "self": {impl: rate([r.selves[impl] for r in ran if impl in r.selves]) for impl in implementations},
        "classes": rows(decided=True),
        "order_classes": rows(decided=False),
        "tie_classes": [{"class": k, "count": n, "example_case": tie_examples[k]} for k, n in ties.most_common()],
        "failures": [{"case": r.index, "failure": (r.failure or "").splitlines()[0]} for r in results if r.failure],
        # Added within schema version 1: whether the cases had lifecycle features (a summary without it had none).
        "lifecycle": any(_has_lifecycle(r.case) for r in results),
        "runs_failed": _failed_runs(results),
    }


def _has_lifecycle(case: cases.Case) -> bool:
    return bool(case.waitForPodsReady or case.admissionChecks
                or any(w.maximumExecutionTimeSeconds or w.checkRule for w in case.workloads()))


def disagreeing(results: list[CaseResult]) -> list[CaseResult]:
    """Cases with a decision difference that both implementations reproduced in their repeats."""
    return [r for r in results if r.cross is not None and any(d.kind in comparing.DECISION_KINDS for d in _stable(r))]


def confirm(summary: dict, first: list[CaseResult], again: list[CaseResult]) -> None:
    """Add to ``summary`` what a second run of the disagreeing cases, in a small batch, showed: a
    difference that does not come back there depended on the big batch (the timing of cycles
    under its load), not on a rule. ``again[i]`` is the rerun of ``first[i]``."""
    rows = []
    for before, after in zip(first, again, strict=True):
        kept = {d.klass for d in _stable(after) if d.kind in comparing.DECISION_KINDS} if after.cross else set()
        classes = sorted({d.klass for d in _stable(before) if d.kind in comparing.DECISION_KINDS})
        rows.append({"case": before.index, "seed": before.case.seed, "classes": classes,
                     "reproduced": sorted(kept & set(classes)), "rerun_failed": after.cross is None})
    gone = sum(len([d for d in _stable(b) if d.kind in comparing.DECISION_KINDS and d.klass not in set(r["reproduced"])])
               for b, r in zip(first, rows, strict=True))
    cross = summary["cross"]
    summary["confirmation"] = {
        "cases": rows,
        "decisions_differing_only_in_the_big_batch": gone,
        "rate_after_confirmation": (cross["agreeing"] + gone) / cross["decisions"] if cross["decisions"] else None,
    }


def _failed_runs(results: list[CaseResult]) -> list[dict]:
    """Runs (implementation, repeat) that failed for some cases, with their first line: a failed run
    of a batch leaves the case's other runs to compare."""
    seen: dict[tuple[str, int, str], int] = {}
    for r in results:
        for impl, runs in r.outcomes.items():
            for repeat, outcome in enumerate(runs):
                if outcome.failure:
                    key = (impl, repeat, outcome.failure.splitlines()[0])
                    seen[key] = seen.get(key, 0) + 1
    return [{"implementation": i, "repeat": n, "cases": c, "failure": f} for (i, n, f), c in seen.items()]


def _stable(result: CaseResult) -> list[comparing.Difference]:
    """Cross differences on subjects where neither implementation disagreed with itself (nor
    differed from itself after a tie)."""
    assert result.cross is not None
    unstable = {(d.epoch, d.kind, d.subject) for c in result.selves.values() for d in c.differences + c.set_aside}
    return [d for d in result.cross.differences if (d.epoch, d.kind, d.subject) not in unstable]


def write(results: list[CaseResult], summary: dict, out: Path, a: str, b: str) -> None:
    """summary.json, one line per case and implementation run in decisions.jsonl, and the case
    file of every case whose runs disagree or tie in cases/."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION, **summary}, indent=2) + "\n")
    (out / "cases").mkdir(exist_ok=True)
    with (out / "cases.jsonl").open("w") as lines:
        for r in results:
            lines.write(json.dumps({"case": r.index, **r.case.model_dump(mode="json")}) + "\n")
    with (out / "decisions.jsonl").open("w") as lines:
        for r in results:
            for impl, runs in r.outcomes.items():
                for repeat, outcome in enumerate(runs):
                    lines.write(json.dumps({"case": r.index, "seed": r.case.seed, "implementation": impl,
                                            "repeat": repeat, "failure": outcome.failure,
                                            "epochs": [dataclasses.asdict(d) for d in outcome.decisions]}) + "\n")
            if r.cross is not None and (not r.cross.agrees or r.cross.tie is not None):
                body = cases.dump(r.case)
                notes = "".join(f"# {comparing.describe(d, a, b)}\n" for d in _stable(r)[:20])
                tie = r.cross.tie
                notes += "".join(f"# set aside ({tie.klass(d)}): {comparing.describe(d, a, b)}\n"
                                 for d in r.cross.set_aside[:20] if tie is not None)
                (out / "cases" / f"case-{r.index:03d}.yaml").write_text(notes + body)


def still_disagrees(run_batch: RunBatch, implementations: tuple[str, str], classes: list[str],
                    name: str) -> shrinking.Verdicts:
    """For shrinking: which candidates still show a difference of their owner's class (one run
    of each implementation, every candidate side by side)."""
    a, b = implementations
    rounds = iter(range(1000))
    tag = uuid.uuid4().hex[:4]

    def check(options: list[tuple[int, cases.Case]]) -> list[bool]:
        by_prefix = {rendering.prefix_of(i): case for i, (_, case) in enumerate(options)}
        n = next(rounds)
        got_a = run_batch(a, by_prefix, f"{name}-{tag}-{a[:3]}-{n}")
        got_b = run_batch(b, by_prefix, f"{name}-{tag}-{b[:3]}-{n}")
        verdicts = []
        for i, (owner, case) in enumerate(options):
            left, right = got_a[rendering.prefix_of(i)], got_b[rendering.prefix_of(i)]
            if left.failure or right.failure:
                verdicts.append(False)
                continue
            found = comparing.compare(case, left.decisions, right.decisions)
            verdicts.append(any(d.klass == classes[owner] for d in found.differences))
        return verdicts

    return check


def minimal_cases(results: list[CaseResult], summary: dict, run_batch: RunBatch, implementations: tuple[str, str],
                  out: Path, say: Callable[[str], None] = print, per_class: int = 1) -> list[Path]:
    """Shrink up to ``per_class`` cases of every decision difference class, all at once; write each
    as cases/minimal-<class>-<case>.yaml and name it in the summary's class row."""
    picked: list[tuple[dict, CaseResult]] = []
    for row in summary["classes"]:
        owners = [r for r in results if any(d.klass == row["class"] for d in _stable(r))][:per_class]
        picked += [(row, r) for r in owners]
    say(f"shrinking {len(picked)} case(s): {', '.join(str(r.index) for _, r in picked)}")
    minimal = shrinking.shrink_many([r.case for _, r in picked],
                                    still_disagrees(run_batch, implementations, [row["class"] for row, _ in picked],
                                                    "shrink"), say=say)
    written = []
    for (row, result), case in zip(picked, minimal, strict=True):
        slug = "".join(c if c.isalnum() else "-" for c in row["class"]).strip("-")
        path = out / "cases" / f"minimal-{slug}-{result.index:03d}.yaml"
        path.write_text(f"# {row['class']}: shrunk from case {result.index} (seed {result.case.seed})\n"
                        + cases.dump(case))
        row.setdefault("minimal", []).append(str(path.relative_to(out)))
        written.append(path)
    return written


def read(out: Path, implementations: tuple[str, str]) -> list[CaseResult]:
    """The results of a finished or interrupted run, from its files (cases from cases.jsonl, or
    from their seeds for runs written before it existed)."""
    outcomes: dict[int, dict[str, list[batching.Outcome]]] = {}
    seeds: dict[int, int] = {}
    for line in (out / "decisions.jsonl").read_text().splitlines():
        row = json.loads(line)
        seeds[row["case"]] = row["seed"]
        runs = outcomes.setdefault(row["case"], {}).setdefault(row["implementation"], [])
        runs.append(batching.Outcome([decided.from_json(e) for e in row["epochs"]], row["failure"]))
    stored = {}
    if (out / "cases.jsonl").exists():
        for line in (out / "cases.jsonl").read_text().splitlines():
            row = json.loads(line)
            index = row.pop("case")
            stored[index] = cases.parse(row, f"{out}/cases.jsonl")
    return [_result(i, stored.get(i) or generating.generate(seeds[i]), outcomes[i], implementations)
            for i in sorted(outcomes)]
