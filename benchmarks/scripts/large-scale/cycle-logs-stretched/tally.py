"""Heads per class and decision, cycles that decided a head, and how soon a parked head of a ClusterQueue is
tried again, from the two cycle logs here.

    python tally.py   # writes heads.csv and park-gaps.csv beside it
"""
import collections
import csv
import gzip
import json
import re
import statistics
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parents[4] / "results" / "large-scale" / "cycle-logs-stretched"
OURS = re.compile(r"^(\S+ \S+) INFO .*cycle (\d+): (Admit|Preempt for|Park|Wait) ([a-z]+)-\S* (?:in|->) (\S+?):? (.*)$")


def _kueue_time(stamp: str) -> float:
    """zap's RFC 3339 with up to nanoseconds, trailing zeros dropped."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    return datetime.fromisoformat(whole + "+00:00").timestamp() + float("0." + (fraction or "0"))


def kueue(path):
    """(time, cluster queue, class, decision) per head Kueue evaluated."""
    for line in gzip.open(path, "rt"):
        if '"Workload evaluated for admission"' not in line:
            continue
        d = json.loads(line)
        status, message = d.get("status", ""), d.get("reason", "")
        if status == "assumed":
            decision = "admit"
        elif status == "skipped":
            decision = "wait: " + message
        elif "Pending the preemption" in message:
            decision = "preempt"
        else:
            decision = "park: no fit or no candidates"
        t = _kueue_time(d["ts"])
        yield t, d["clusterQueue"]["name"], d["workload"]["name"].split("-")[0], decision, d["schedulingCycle"]


def ours(path):
    for line in gzip.open(path, "rt"):
        m = OURS.match(line)
        if not m:
            continue
        t = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
        kind, rest = m.group(3), m.group(6)
        decision = {"Admit": "admit", "Preempt for": "preempt", "Park": "park: no fit or no candidates"}.get(kind)
        if decision is None:
            decision = "wait: " + rest
        yield t, m.group(5), m.group(4), decision, int(m.group(2))


def main():
    heads = collections.Counter()
    gaps = []
    for name, rows in (("kueue", list(kueue(HERE / "kueue-cycles.log.gz"))),
                       ("ours", list(ours(HERE / "ours-cycles.log.gz")))):
        parks = collections.defaultdict(list)
        for t, cq, klass, decision, _ in rows:
            heads[(name, klass, decision)] += 1
            if decision.startswith("park"):
                parks[cq].append(t)
        between = [b - a for times in parks.values() for a, b in zip(sorted(times), sorted(times)[1:])]
        q = statistics.quantiles(between, n=10)
        cycles = len({row[4] for row in rows})
        gaps.append((name, cycles, len(rows), sum(len(v) for v in parks.values()), round(q[0], 2), round(q[4], 2),
                     round(q[8], 2)))
    with open(HERE / "heads.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["implementation", "class", "decision", "heads"])
        w.writerows(sorted((*k, v) for k, v in heads.items()))
    with open(HERE / "park-gaps.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["implementation", "cycles_deciding", "heads", "parks", "gap_p10_s", "gap_p50_s", "gap_p90_s"])
        w.writerows(gaps)


if __name__ == "__main__":
    main()
