"""Benchmark (no cluster): how many evictions Kueue's baseline makes at each scheduler pace, with the
decisions held fixed (the reference core) and only the pace changed, beside what real runs measured.

For each scenario and each cycle time in --cycles, `harness.drivers.kueuebaseline.pacing` runs the
baseline in process (arrivals on Kueue's schedule, run times, batched retries, Kueue's 1-10 ms
slow-down) and counts admissions, evictions and cycles. One more point per scenario writes the
reasons of turned-away heads in the cycle (--write-seconds each), as Kueue does. Each --measured run
folder (a committed kueue-baseline run) adds its cases: the time between two cycles (wall / cycles,
from the scheduler's own cycle counter: Kueue's admission attempts, ours its cycle histogram) and the
evictions. Both are drawn per cohort, since cohorts share no quota. The core decides as the Kueue of
--kueue-version does (its settings in harness/versions.toml, [kueue.reference]), with the scenario's own
fair sharing. Each --pace adds a point of any other pace (JSON of pacing.Pace's fields, e.g. a start
latency). Writes pace.json (every
point, the command, the git sha), pace.csv (the model's points), measured.csv (the runs' cases) and
pace.png into --out. A measured run's observations are in the results store: pull them first.

    .venv/bin/kqbench results pull results/peer/kueue-baseline-1cohort-3x-batched
    .venv/bin/kqbench results pull results/peer/kueue-baseline-full-3x-batched
    .venv/bin/python benchmarks/micro/bench_pace.py --out results/peer/pace \
        --measured results/peer/kueue-baseline-1cohort-3x-batched --measured results/peer/kueue-baseline-full-3x-batched
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import sys
import time
from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from harness.drivers.kueuebaseline import pacing, replayshape  # noqa: E402
from harness.implementations import names  # noqa: E402
from harness.results import runs  # noqa: E402
from harness.scenarios import loading, models  # noqa: E402
from harness.toolchain import versions  # noqa: E402

SCENARIOS = ("results/peer/kueue-baseline-1cohort-peers.yaml", "results/peer/kueue-baseline-peers.yaml")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", action="append", help="kueue-baseline scenarios (default: one cohort, full size)")
    parser.add_argument("--cycles", default="0.001,0.003,0.01,0.02,0.05,0.1,0.15,0.3",
                        help="cycle times to sweep, seconds, comma-separated")
    parser.add_argument("--write-seconds", type=float, default=0.004,
                        help="one pending-reason write for the Kueue-writes point")
    parser.add_argument("--measured", action="append", type=Path, default=[],
                        help="a kueue-baseline run folder whose cases are drawn beside the model")
    parser.add_argument("--kueue-version", default=None,
                        help="decide as this Kueue version does (one of harness/versions.toml; default: its pinned one)")
    parser.add_argument("--pace", action="append", type=_pace, default=[],
                        help='one more point per scenario at this pace, JSON of its fields, e.g. '
                             '\'{"cycle_seconds": 0.003, "start_seconds": 0.9}\'')
    parser.add_argument("--no-model", action="store_true",
                        help="only tabulate the --measured runs (measured.csv): no model points, no plot")
    parser.add_argument("--out", type=Path, default=Path("results/peer/pace"))
    args = parser.parse_args()
    version_settings = versions.reference_settings(args.kueue_version)
    args.out.mkdir(parents=True, exist_ok=True)
    points = []
    for path in [] if args.no_model else args.scenario or SCENARIOS:
        scenario = loading.load(path).scenario
        settings = replayshape.core_settings(scenario.scheduler, version_settings)
        cohorts = _cohorts(scenario)
        paces = [pacing.Pace(cycle_seconds=float(c)) for c in args.cycles.split(",")]
        paces.append(pacing.Pace(cycle_seconds=0.003, write_seconds=args.write_seconds, release_seconds=0.05))
        for pace in [*paces, *args.pace]:
            started = time.perf_counter()
            outcome = pacing.run(scenario, pace, settings=settings)
            points.append(_model_point(path, cohorts, outcome))
            print(f"{Path(path).stem} cycle {pace.cycle_seconds * 1000:g} ms, writes {pace.write_seconds * 1000:g} ms: "
                  f"evictions {outcome.evictions}, cycles {outcome.cycles}, wall {outcome.wall_seconds:.0f} s "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
    for folder in args.measured:
        points.extend(_measured(folder))
        for case, profile in {} if args.no_model else _kueue_profiles(folder).items():
            # The model at Kueue's own spread of cycle times, as measured in this run's Kueue case.
            scenario = loading.load(path_of(args)).scenario
            outcome = pacing.run(scenario, pacing.Pace(profile=profile),
                                 settings=replayshape.core_settings(scenario.scheduler, version_settings))
            points.append({**_model_point(path_of(args), _cohorts(scenario), outcome),
                           "label": f"{Path(folder).name}: {case}"})
            print(f"{Path(folder).name} {case}: Kueue's cycle times drawn: evictions {outcome.evictions}", flush=True)
    record = {"command": " ".join(["benchmarks/micro/bench_pace.py", *sys.argv[1:]]), "git": runs.git_sha(),
              "kueue_version": versions.kueue_version(args.kueue_version), "core_settings": version_settings,
              "points": points}
    (args.out / "pace.json").write_text(json.dumps(record, indent=1) + "\n")
    _table(points, args.out)
    if not args.no_model:
        _plot(points, args.out / "pace.png")
    return 0


def _pace(text: str) -> pacing.Pace:
    try:
        return pacing.Pace(**json.loads(text))
    except (ValueError, TypeError) as error:
        raise argparse.ArgumentTypeError(f"--pace wants JSON of {', '.join(f.name for f in dataclasses.fields(pacing.Pace))}"
                                         f" ({error})") from None


def _model_point(scenario: str, cohorts: int, outcome: pacing.Outcome) -> dict:
    return {"source": "model", "scenario": scenario, "cohorts": cohorts, "pace": dataclasses.asdict(outcome.pace),
            "wall_seconds": round(outcome.wall_seconds, 2), "cycles": outcome.cycles,
            "admissions": outcome.admissions, "evictions": outcome.evictions,
            "evictions_by_class": outcome.evictions_by_class, "pending_writes": outcome.pending_writes,
            "heads": outcome.heads, "preempting_heads": outcome.preempting_heads,
            "parked_heads": outcome.parked_heads, "complete": outcome.complete}


def _only_cycle_time(pace: dict) -> bool:
    """A point of the cycle-time sweep: every other field of its pace at the model's default."""
    return {**pace, "cycle_seconds": 0.0} == dataclasses.asdict(pacing.Pace(cycle_seconds=0.0))


def _cohorts(scenario) -> int:
    return len({cohort for cq in scenario.queues.cluster_queues for _, cohort in cq.expanded() if cohort}) or 1


def _observations(folder: Path) -> pd.DataFrame:
    path = folder / "tables" / "observations.parquet"
    if not path.is_file():
        raise SystemExit(f"{path} is not here: `kqbench results pull {folder}` brings it back from the results store")
    return pd.read_parquet(path)


def _measured(folder: Path) -> list[dict]:
    """One point per case of a committed kueue-baseline run: evictions, cycles, wall."""
    run = json.loads((folder / "run.json").read_text())
    cohorts = _cohorts(models.Scenario.model_validate(run["scenario"]))
    figures = pd.read_csv(folder / "tables" / "kueue_baseline.csv")
    observed = _observations(folder)
    counters = ("kueue_admission_attempt_duration_seconds_count", "kqbench_scheduler_cycle_duration_seconds_count")
    out = []
    for case, rows in figures.groupby("case"):
        value = rows.set_index("metric")["kqbench"]
        mine = observed[(observed["case"] == case) & observed["metric"].isin(counters)]
        cycles = int(mine.groupby("labels")["value"].max().sum())  # Kueue counts success and inadmissible apart
        out.append({"source": "measured", "scenario": str(folder), "case": case, "cohorts": cohorts,
                    "implementation": str(rows["implementation"].iloc[0]), "cycles": cycles,
                    "evictions": int(value["evictions"]), "wall_seconds": round(float(value["wall_seconds"]), 2),
                    "complete": bool(value.get("complete", 1))})
    return out


def path_of(args: argparse.Namespace) -> str:
    """The scenario the measured profiles are drawn on: the first one swept."""
    return (args.scenario or SCENARIOS)[0]


def _kueue_profiles(folder: Path) -> dict[str, tuple]:
    """Each Kueue case's cycle times as a pace profile (its admission-attempt histogram, both results)."""
    observed = _observations(folder)
    rows = observed[(observed["metric"] == "kueue_admission_attempt_duration_seconds_bucket")
                    & observed["case"].str.contains("implementation=kueue")]
    out = {}
    for case, group in rows.groupby("case"):
        buckets: dict[float, float] = {}
        for labels, value in group.groupby("labels")["value"].max().items():
            bound = json.loads(labels)["le"]
            if bound != "+Inf":
                buckets[float(bound)] = buckets.get(float(bound), 0.0) + value
        out[case] = pacing.profile_of(buckets)
    return out


def _interval_ms(point: dict) -> float:
    """Time between two cycles: what a run can measure of its scheduler's pace."""
    return point["wall_seconds"] / max(point["cycles"], 1) * 1000


def _table(points: list[dict], folder: Path) -> None:
    """pace.csv: the model's points; measured.csv: the runs' cases."""
    model = [{"scenario": p.get("label") or Path(p["scenario"]).stem, "cohorts": p["cohorts"],
              "cycle_ms": "Kueue's, drawn" if p["pace"]["profile"] else p["pace"]["cycle_seconds"] * 1000,
              "write_ms": p["pace"]["write_seconds"] * 1000, "start_ms": p["pace"]["start_seconds"] * 1000,
              "release_ms": p["pace"]["release_seconds"] * 1000,
              "cycles": p["cycles"], "heads": p.get("heads"), "preempting_heads": p.get("preempting_heads"),
              "parked_heads": p.get("parked_heads"), "wall_seconds": p["wall_seconds"], "between_cycles_ms": round(_interval_ms(p), 1),
              "evictions": p["evictions"], "evictions_per_cohort": round(p["evictions"] / p["cohorts"], 1),
              "pending_writes": p["pending_writes"], "complete": p["complete"]}
             for p in points if p["source"] == "model"]
    measured = [{"run": Path(p["scenario"]).name, "case": p["case"], "implementation": p["implementation"],
                 "cohorts": p["cohorts"], "cycles": p["cycles"], "wall_seconds": p["wall_seconds"],
                 "between_cycles_ms": round(_interval_ms(p), 1), "evictions": p["evictions"],
                 "evictions_per_cohort": round(p["evictions"] / p["cohorts"], 1), "complete": p["complete"]}
                for p in points if p["source"] == "measured"]
    for name, rows in (("pace.csv", model), ("measured.csv", measured)):
        if rows:
            with (folder / name).open("w", newline="") as out:
                writer = csv.DictWriter(out, list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)


def _plot(points: list[dict], path: Path) -> None:
    figure, axis = plt.subplots(figsize=(7.5, 4.5))
    for scenario in dict.fromkeys(p["scenario"] for p in points if p["source"] == "model"):
        swept = sorted((p for p in points if p["scenario"] == scenario and p["source"] == "model" and "label" not in p
                        and _only_cycle_time(p["pace"])), key=_interval_ms)
        if not swept:
            continue
        axis.plot([_interval_ms(p) for p in swept], [max(p["evictions"] / p["cohorts"], 0.5) for p in swept],
                  marker="o", alpha=0.6, label=f"model: the core at a fixed cycle time ({Path(scenario).stem})")
    markers = {names.KUEUE: "s", names.REFERENCE: "^"}
    for (scenario, implementation), group in _groups(points):
        axis.scatter([_interval_ms(p) for p in group], [max(p["evictions"] / p["cohorts"], 0.5) for p in group],
                     marker=markers.get(implementation, "x"), s=60, zorder=3,
                     label=f"measured: {implementation}, {Path(scenario).name}")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.set_xlabel("time between two scheduling cycles, ms (wall / cycles)")
    axis.set_ylabel("evictions per cohort in the run")
    axis.set_title("Evictions against the scheduler's pace (decisions fixed: the reference core)")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)


def _groups(points: list[dict]):
    measured = [p for p in points if p["source"] == "measured"]
    keys = dict.fromkeys((p["scenario"], p["implementation"]) for p in measured)
    return [(key, [p for p in measured if (p["scenario"], p["implementation"]) == key]) for key in keys]


if __name__ == "__main__":
    sys.exit(main())
