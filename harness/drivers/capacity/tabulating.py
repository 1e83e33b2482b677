"""The capacity tables (pure): one row per step as it ends, one row per search plan, and the
capacity table made from them after every design ran (the admissions post-pass included).

A design is a strategy with its client limit: `status-field` runs with Kueue's limit (qps 50 /
burst 100) and again without one, so that demand and delivery can be told apart.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping

import pandas as pd

from harness.drivers.capacity import conditions, searching
from scheduler.publishing import strategies

STEPS = "capacity_steps"
PLANS = "capacity_plans"
TABLES = (STEPS, PLANS)
CAPACITY_CSV = "capacity.csv"

FIGURES = tuple(f.name for f in dataclasses.fields(conditions.StepFigures))
STEP_COLUMNS = ("design", "strategy", "client_limit", "step", "phase", "load", "stage", "held", "broken", "detail",
                *FIGURES)
PLAN_COLUMNS = ("design", "strategy", "client_limit", "vary", "start", "stop", "factor", "relative_resolution",
                "absolute_resolution", "max_steps", "max_consecutive_errors", "hold_seconds", "thresholds")
AT_BREAK = ("pending", "admissions_per_second", "admissions_share_of_indexed", "position_writes_demanded_per_second",
            "position_writes_per_second", "staleness_p99_seconds", "query_p99_seconds", "bystander_p99_seconds",
            "list_p99_seconds", "throttled_share", "refused_position_writes", "largest_object_bytes",
            "apiserver_rss_bytes", "etcd_rss_bytes", "visibility_server_p99_seconds", "machine_cores",
            "apiserver_cores", "scheduler_cores", "others_cores")


def client_limit(no_client_limit: bool, qps: float, burst: int) -> str:
    return "none" if no_client_limit else f"qps {qps:g}/burst {burst}"


def design(strategy: str, no_client_limit: bool) -> str:
    """The name a design goes by in tables and plots."""
    return f"{strategy}, no client limit" if no_client_limit else strategy


def variants(names: list[str] | tuple[str, ...], qps: float, burst: int) -> list[dict]:
    """What a capacity run sweeps over the scheduler section: aggregated-indexed first (the others
    are compared with it), status-field twice (Kueue's client limit, then none). Each variant is
    merged into the scenario's section, so unnamed fields keep the scenario's values."""
    ordered = sorted(dict.fromkeys(names), key=lambda s: s != conditions.REFERENCE_STRATEGY)
    found = []
    for strategy in ordered:
        if strategy == strategies.STATUS_FIELD:
            found.append({"strategy": strategy, "qps": qps, "burst": burst, "no_client_limit": False})
            found.append({"strategy": strategy, "no_client_limit": True})
        else:
            found.append({"strategy": strategy})
    return found


def plan_row(name: str, strategy: str, limit: str, vary: str, plan: searching.SearchPlan, hold_seconds: float,
             thresholds: conditions.BreakThresholds) -> pd.DataFrame:
    row = {"design": name, "strategy": strategy, "client_limit": limit, "vary": vary, "start": plan.start,
           "stop": plan.stop, "factor": plan.factor, "relative_resolution": plan.relative_resolution,
           "absolute_resolution": plan.absolute_resolution, "max_steps": plan.max_steps,
           "max_consecutive_errors": plan.max_consecutive_errors, "hold_seconds": hold_seconds,
           "thresholds": thresholds.model_dump_json()}
    return pd.DataFrame([row], columns=list(PLAN_COLUMNS))


def step_row(name: str, strategy: str, limit: str, phase: str, step: searching.Step) -> pd.DataFrame:
    figures = conditions.StepFigures.from_dict(step.verdict.figures)
    row = {"design": name, "strategy": strategy, "client_limit": limit, "step": step.index, "phase": phase,
           "load": step.load, "stage": step.stage, "held": step.verdict.held, "broken": ",".join(step.verdict.broken),
           "detail": step.verdict.detail,
           **{f: math.nan if getattr(figures, f) is None else getattr(figures, f) for f in FIGURES}}
    return pd.DataFrame([row], columns=list(STEP_COLUMNS))


def steps_of(frame: pd.DataFrame) -> dict[str, tuple[searching.Step, ...]]:
    """Searches back from the steps table, by design, in step order."""
    found: dict[str, tuple[searching.Step, ...]] = {}
    for name, rows in frame.groupby("design", sort=False):
        steps = []
        for row in rows.sort_values("step").itertuples(index=False):
            values = {f: getattr(row, f) for f in FIGURES if not _missing(getattr(row, f))}
            broken = tuple(b for b in str(row.broken).split(",") if b) if not _missing(row.broken) else ()
            detail = "" if _missing(row.detail) else str(row.detail)
            steps.append(searching.Step(int(row.step), int(row.load), str(row.stage),
                                        searching.Verdict(broken, detail, values)))
        found[str(name)] = tuple(steps)
    return found


def plans_of(frame: pd.DataFrame) -> dict[str, tuple[searching.SearchPlan, conditions.BreakThresholds, pd.Series]]:
    found = {}
    for row in frame.drop_duplicates("design", keep="last").itertuples(index=False):
        plan = searching.SearchPlan(int(row.start), int(row.stop), float(row.factor), float(row.relative_resolution),
                                    int(row.absolute_resolution), int(row.max_steps), int(row.max_consecutive_errors))
        found[str(row.design)] = (plan, conditions.BreakThresholds(**json.loads(row.thresholds)),
                                  pd.Series(row._asdict()))
    return found


def _judged(tables: Mapping[str, pd.DataFrame]):
    """Plans and steps by design, the admissions post-pass applied (reference: aggregated-indexed)."""
    steps_frame, plans_frame = tables.get(STEPS), tables.get(PLANS)
    if steps_frame is None or plans_frame is None or steps_frame.empty or plans_frame.empty:
        return {}, {}
    plans = plans_of(plans_frame)
    searches = steps_of(steps_frame)
    reference = next((name for name, (_, _, row) in plans.items()
                      if row["strategy"] == conditions.REFERENCE_STRATEGY and row["client_limit"] != "none"), None)
    reference_steps = searches.get(reference, ()) if reference else ()
    judged = {}
    for name, (_, thresholds, _) in plans.items():
        if name == reference:
            judged[name] = searches.get(name, ())
            continue
        amended = conditions.admissions_postpass(
            thresholds, {conditions.REFERENCE_STRATEGY: reference_steps, name: searches.get(name, ())})
        judged[name] = amended[name]
    return plans, judged


def capacity(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Design x largest load held x first condition broken x the figures at that step (post-pass applied)."""
    plans, judged = _judged(tables)
    rows = []
    for name, (plan, _, row) in plans.items():
        outcome = searching.conclude(plan, judged[name])
        at = outcome.breaking_step or (outcome.steps[-1] if outcome.steps else None)
        figures = dict(at.verdict.figures) if at else {}
        share = conditions.StepFigures.from_dict(figures).throttled_share
        figures["throttled_share"] = math.nan if share is None else share
        rows.append({
            "design": name, "strategy": row["strategy"], "client_limit": row["client_limit"], "vary": row["vary"],
            "conclusion": outcome.conclusion, "max_held": _or_nan(outcome.max_held),
            "first_broken": _or_nan(outcome.first_broken),
            "broke_on": ",".join(outcome.breaking_step.verdict.broken) if outcome.breaking_step else "",
            "detail": outcome.breaking_step.verdict.detail if outcome.breaking_step else "",
            "gap": _or_nan(outcome.gap), "steps": len(outcome.steps),
            "held_above_break": ",".join(map(str, outcome.out_of_order)), "search": plan.describe(),
            **{f"at_step_{k}": figures.get(k, math.nan) for k in AT_BREAK},
        })
    return pd.DataFrame(rows)


def judged_steps(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Every step with the post-pass applied, one row each (for curves and break markers)."""
    plans, judged = _judged(tables)
    rows = [step_row(name, row["strategy"], row["client_limit"], "", step)
            for name, (_, _, row) in plans.items() for step in judged[name]]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=list(STEP_COLUMNS))


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _or_nan(value: int | None) -> float:
    return math.nan if value is None else float(value)
