"""Evictions of the second epoch (the preempting head's) per case and implementation, by victim class and
reason, from decisions.jsonl.gz:  python tally.py  -> evictions.csv"""
import collections
import csv
import gzip
import json
from pathlib import Path

HERE = Path(__file__).resolve().parents[4] / "results" / "agreement" / "preempting-states"
rows = []
for line in gzip.open(HERE / "decisions.jsonl.gz", "rt"):
    run = json.loads(line)
    second = run["epochs"][1]
    counted = collections.Counter((name.split("-")[0], reason) for name, reason in second["evicted"])
    for (victim, reason), count in sorted(counted.items()):
        rows.append((run["case"], run["implementation"], victim, reason, count))
with open(HERE / "evictions.csv", "w", newline="") as f:
    writer = csv.writer(f)
    writer.writerow(["case", "implementation", "victim_class", "reason", "evictions"])
    writer.writerows(sorted(rows))
