"""A differential run's report, rendered from its summary.json and run.json only (pure).

`kqbench agree` writes it as report.md beside the data; re-rendering from the committed files
gives the same text, so every figure in it is one the data holds.
"""

from __future__ import annotations

from harness.agreeing import comparing


def render(run: dict, summary: dict) -> str:
    a, b = summary["implementations"]
    lines = [
        f"# Decisions compared: {a} and {b}",
        "",
        f"`{run['command']}` at git `{run['git_sha'][:12]}`; {summary['cases']} cases "
        f"(seeds {_seeds(run['seeds'])}), {run['repeats']} runs per implementation, {run['batch']} cases per cluster"
        + (f", {summary['seconds'] / 60:.0f} min in all" if "seconds" in summary else "") + ".",
        "",
        "| pair | cases run | cases agreeing | decisions | agreeing | rate | pending lists and usage agreeing |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    pairs = [(f"{a} / {b}", summary["cross"])] + [(f"{impl} / itself", r) for impl, r in summary["self"].items()]
    for label, r in pairs:
        rate = "-" if r["rate"] is None else f"{r['rate']:.2%}"
        lines.append(f"| {label} | {r['cases']} | {r['cases_agreeing']} | {r['decisions']} | {r['agreeing']} | {rate} "
                     f"| {r['orders_agreeing']} / {r['orders']} |")
    lines += ["", "A decision is where each Workload holds quota after each epoch (ClusterQueue, flavor per pod set",
              "and resource, or nowhere) and each eviction with its reason. A difference counts only where",
              "neither implementation disagreed with its own repeat on it.", ""]
    if summary.get("lifecycle"):
        lines[-1:-1] = ["With the Workload lifecycle in the cases, also each deactivation with its reason, each",
                        "requeue count and each Workload's admission check states, where either side has one."]
    if "decisions_set_aside" in summary["cross"]:  # summaries written before ties were told apart lack it
        lines += _ties(pairs)
    for title, key in (("Decisions that differ", "classes"), ("Pending lists and usage that differ", "order_classes")):
        rows = summary.get(key) or []
        lines += [f"## {title}", ""]
        if not rows:
            lines += ["None.", ""]
            continue
        lines += ["| class | differences | example case | minimal case |", "|---|---:|---:|---|"]
        lines += [f"| {r['class']} | {r['count']} | {r['example_case']} | {', '.join(r.get('minimal', []))} |"
                  for r in rows]
        lines.append("")
    if summary.get("tie_classes"):
        lines += ["## Differences set aside after a tie", "", f"`{comparing.TIE}`: the tie's own evictions; "
                  "the other rows followed from it.", "", "| class | differences | example case |", "|---|---:|---:|"]
        lines += [f"| {r['class']} | {r['count']} | {r['example_case']} |" for r in summary["tie_classes"]]
        lines.append("")
    confirmation = summary.get("confirmation")
    if confirmation:
        rate = confirmation["rate_after_confirmation"]
        lines += ["## The disagreeing cases run again in a batch of their own", "",
                  f"{confirmation['decisions_differing_only_in_the_big_batch']} of the differing decisions did not "
                  "come back: they depended on the big batch (the timing of cycles under its load), not on a rule; "
                  + (f"agreement counting only those that did: {rate:.2%}." if rate is not None else ""), "",
                  "| case | seed | classes in the big batch | reproduced |", "|---:|---:|---|---|"]
        lines += [f"| {c['case']} | {c['seed']} | {', '.join(c['classes'])} | "
                  f"{'rerun failed' if c['rerun_failed'] else ', '.join(c['reproduced']) or 'none'} |"
                  for c in confirmation["cases"]]
        lines.append("")
    if summary["failures"]:
        lines += ["## Cases that failed to run", ""]
        lines += [f"- case {f['case']}: {f['failure']}" for f in summary["failures"]]
        lines.append("")
    return "\n".join(lines)


def _ties(pairs: list[tuple[str, dict]]) -> list[str]:
    return ["Set aside after a tie, in no column above: an epoch whose evictions (or one preemptor's",
            "victims) differ only among Workloads equal in everything Kueue orders preemption candidates by",
            "(ClusterQueue, priority, quota reserved in the same second) on both sides. Kueue's last key is",
            "the UID, random per cluster, so which one goes is a coin flip; the rest of that case is not",
            "compared.", ""] + [
        f"- {label}: {r['decisions_set_aside']} decisions set aside; {r['cases_tied']} case(s) agreeing up to a tie"
        for label, r in pairs] + [""]


def _seeds(seeds: list) -> str:
    numbers = [s for s in seeds if s is not None]
    if numbers and numbers == list(range(numbers[0], numbers[0] + len(numbers))):
        return f"{numbers[0]}-{numbers[-1]}"
    return ", ".join(map(str, numbers)) or "none: case files"
