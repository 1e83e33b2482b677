"""Differential-test cases from the states where the reference scheduler preempted in a run of the stretched
large-scale shape: each case is one preempting head's cohort as the cycle left it (its admitted Workloads
arrive in the first epoch, where they all fit, so both schedulers admit them alike), then the head arrives.

    python make_cases.py <scheduler log with log_cycles> [how many]   # writes case-*.yaml beside it

The cohort is the shape's (ten ClusterQueues of 20 CPU, borrowing limit 100, five of them at weight 2,
LowerPriority within, Any reclaim) with fair sharing on. What a case leaves out: which admitted Workloads
were already being evicted, and that the cycle's admissions ordered after the head are in the state.
"""
import json
import re
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parents[4] / "results" / "agreement" / "preempting-states"
PREEMPT = re.compile(r"cycle (\d+): Preempt for (\S+) in (\S+): (.*)$")
STATE = re.compile(r"cycle (\d+): cohort after it: (\{.*\})$")
PRIORITY = {"small": 50, "medium": 100, "large": 200}
CPU = {"small": "1", "medium": "5", "large": "20"}


def cluster_queue(name: str) -> dict:
    return {"name": name, "cohort": "co",
            "preemption": {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"},
            "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
                {"name": "cpu", "nominalQuota": "20", "borrowingLimit": "100"}]}]}],
            "fairSharing": {"weight": "2" if "-h" in name else "1"}}


def workload(name: str, queue: str, priority: int, cpu: str) -> dict:
    return {"name": name, "namespace": "ns", "queueName": "lq-" + queue, "priority": priority,
            "podSets": [{"name": "main", "count": 1, "requests": {"cpu": cpu}}]}


def case(head: str, head_cq: str, state: dict) -> dict:
    arrive = []
    for queue, admitted in state.items():
        for name, priority, usage, _evicting in admitted:
            arrive.append(workload(name, queue, priority, f"{usage['default/cpu']}m"))
    return {"version": 2, "fairSharing": {}, "flavors": [{"name": "default"}], "namespaces": [{"name": "ns"}],
            "cohorts": [{"name": "co"}], "clusterQueues": [cluster_queue(q) for q in state],
            "localQueues": [{"namespace": "ns", "name": "lq-" + q, "clusterQueue": q} for q in state],
            "epochs": [{"arrive": arrive},
                       {"arrive": [workload(head, head_cq, PRIORITY[head.split("-")[0]], CPU[head.split("-")[0]])]}]}


def main(log: str, wanted: int) -> None:
    lines = Path(log).read_text().splitlines()
    made = 0
    for i, line in enumerate(lines):
        preempt = PREEMPT.search(line)
        if not preempt or i + 1 >= len(lines) or not (state := STATE.search(lines[i + 1])):
            continue
        head, head_cq, targets = preempt.group(2), preempt.group(3), preempt.group(4)
        if not head.startswith("large") or "InCohortFairSharing" not in targets:
            continue  # ours' largest excess: a large Workload preempting under fair sharing
        cohort = json.loads(state.group(2))
        for admitted in cohort.values():  # the head itself, assumed by a later cycle's admission, is not in it yet
            admitted[:] = [a for a in admitted if a[0] != head]
        target = HERE / f"case-{made}.yaml"
        target.write_text(f"# cycle {preempt.group(1)}: {head} in {head_cq} preempted {targets}\n"
                          + yaml.safe_dump(case(head, head_cq, cohort), sort_keys=False))
        made += 1
        if made == wanted:
            break
    print(f"{made} case(s)")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5)
