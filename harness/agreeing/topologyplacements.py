"""Random topology placements decided by Kueue v0.17.0's own code and by the reference scheduler's core.

A case is a flavor's nodes (a topology of 2 or 3 levels, random capacity, some tainted, some in another
zone), admitted usage on some of them, and 1 to 3 pod sets (required, preferred, unconstrained or
implied; some in slices, some a leader-and-workers group; some with a nodeSelector or a toleration),
placed as on a cluster or on empty nodes. Kueue's side runs ``FindTopologyAssignmentsForFlavor`` in a
test added to a copy of its module (``kueue_tas_oracle_test.go.txt``: its TAS cache built from the
case's Node objects and usage, as its own tests build it); ours runs ``scheduler.core.placing`` on the
same objects. They agree when every pod set gets the same domains and counts, or the same reason.

    .venv/bin/python -m harness.agreeing.topologyplacements --cases 1000 --seed 1 \\
        --out results/agreement/tas-placement-random
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.implementations import names
from harness.toolchain import building, gomodules, layout, versions
from scheduler.core import domainchoosing, placing, topologyconversion
from scheduler.core.domaintrees import DomainTree, DomainUsage
from scheduler.core.topologies import HOSTNAME_LABEL, Topology

ORACLE = Path(__file__).with_name("kueue_tas_oracle_test.go.txt")

BLOCK, RACK, GPU = "example.com/block", "example.com/rack", "example.com/gpu"
SCHEMA_VERSION = 1


def random_case(seed: int) -> dict:
    """One case, the same for the same seed."""
    rng = random.Random(seed)
    levels = [BLOCK, RACK, HOSTNAME_LABEL] if rng.random() < 0.75 else [BLOCK, RACK]
    nodes = []
    for b in range(rng.randint(1, 3)):
        for r in range(rng.randint(1, 3)):
            for h in range(rng.randint(1, 4)):
                name = f"b{b}-r{r}-h{h}"
                labels = {BLOCK: f"b{b}", RACK: f"r{r}", HOSTNAME_LABEL: name, "zone": rng.choice("aab")}
                allocatable = {"cpu": str(rng.randint(1, 8)), "pods": str(rng.randint(2, 10))}
                if rng.random() < 0.3:
                    allocatable[GPU] = str(rng.randint(1, 4))
                taints = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}] if rng.random() < 0.15 else []
                nodes.append({"name": name, "labels": labels, "allocatable": allocatable, "taints": taints})
    usage = []
    for node in rng.sample(nodes, k=rng.randint(0, len(nodes))):
        values = [node["labels"][level] for level in levels]
        usage.append({"values": values[-1:] if levels[-1] == HOSTNAME_LABEL else values,
                      "requests": {"cpu": 1000 * rng.randint(0, 3)}, "count": rng.randint(1, 2)})
    pod_sets = []
    group = "g" if rng.random() < 0.2 else None
    for index in range(rng.randint(1, 3)):
        pod_sets.append(_random_pod_set(rng, index, levels, group if index < 2 else None))
    return {"name": f"seed-{seed}", "levels": levels, "nodeLabels": None, "nodes": nodes, "usage": usage,
            "podSets": pod_sets, "simulateEmpty": rng.random() < 0.15}


def _random_pod_set(rng: random.Random, index: int, levels: list[str], group: str | None) -> dict:
    kind = rng.choice(["required", "preferred", "unconstrained", "implied", "slices"])
    level = rng.choice(levels)
    request: dict | None = None
    count = rng.randint(1, 12)
    if kind in ("required", "preferred"):
        request = {kind: level}
    elif kind == "unconstrained":
        request = {"unconstrained": True}
    elif kind == "slices":
        size = rng.choice([1, 2, 3])
        count = size * rng.randint(1, 4)
        request = {rng.choice(["required", "preferred"]): levels[0], "podSetSliceRequiredTopology": level,
                   "podSetSliceSize": size}
    if group is not None:
        request = {**(request or {"unconstrained": True}), "podSetGroupName": group}
    requests = {"cpu": 500 * rng.randint(1, 4)}
    if rng.random() < 0.2:
        requests[GPU] = 1
    pod_set = {"name": f"ps{index}", "count": count, "requests": requests, "topologyRequest": request,
               "implied": request is None}
    if rng.random() < 0.2:
        pod_set["nodeSelector"] = {"zone": "a"}
    if rng.random() < 0.3:
        pod_set["tolerations"] = [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}]
    return pod_set


def ours(case: dict) -> list[dict]:
    """The reference scheduler's core on the case: per pod set its reason and assignment."""
    nodes = []
    for node in case["nodes"]:
        obj = {"metadata": {"name": node["name"], "labels": node["labels"]}, "spec": {"taints": node["taints"]},
               "status": {"allocatable": node["allocatable"], "conditions": [{"type": "Ready", "status": "True"}]}}
        nodes.append(topologyconversion.node_from_dict(obj))
    usage = DomainUsage()
    for index, entry in enumerate(case["usage"]):
        usage.add_workload(index, [(",".join(entry["values"]), _milli(entry["requests"]), entry["count"])])
    tree = DomainTree(Topology("default", tuple(case["levels"])), nodes, node_labels=case["nodeLabels"] or {},
                      usage=usage)
    requests = [placing.PlacementRequest(
        pod_set=p["name"], per_pod=_milli(p["requests"]), count=p["count"],
        request=topologyconversion.topology_request_from_dict(p["topologyRequest"]), implied=p["implied"],
        node_selector=tuple(sorted((p.get("nodeSelector") or {}).items())),
        tolerations=topologyconversion.tolerations_from_list(p.get("tolerations")),
    ) for p in case["podSets"]]
    placed = {p.pod_set: p for p in placing.place_pod_sets(tree, requests, simulate_empty=case["simulateEmpty"])}
    out = []
    for pod_set in case["podSets"]:
        placement = placed.get(pod_set["name"])
        assignment = placement.assignment if placement else None
        out.append({"podSet": pod_set["name"], "reason": placement.reason if placement else "",
                    "assignment": None if assignment is None else {
                        "Levels": list(assignment.levels),
                        "Domains": [{"Values": list(d.values), "Count": d.count} for d in assignment.domains]}})
    return out


def _milli(requests: dict[str, int]) -> dict[str, int]:
    """Kueue's Requests hold cpu in milli-units and the rest in units; the core holds milli-units."""
    return {r: v if r == "cpu" else v * 1000 for r, v in requests.items()}


def kueue(cases: list[dict], version: str) -> list[list[dict]]:
    """Kueue's own placement of every case (one ``go test`` in a copy of its module, kept in the cache so
    that Go's build cache makes the next run quick)."""
    module = layout.cache_root() / "tas-oracle" / f"kueue-{version}"
    if not (module / "go.mod").exists():
        shutil.rmtree(module, ignore_errors=True)
        shutil.copytree(building.module_dir(gomodules.KUEUE_MODULE, version), module)
        for path in module.rglob("*"):
            path.chmod(path.stat().st_mode | 0o200)
    shutil.copy(ORACLE, module / "pkg" / "cache" / "scheduler" / "zz_oracle_test.go")
    with tempfile.TemporaryDirectory(prefix="kqbench-tas-oracle-") as work:
        given, answered = Path(work) / "cases.jsonl", Path(work) / "kueue.jsonl"
        given.write_text("".join(json.dumps(c) + "\n" for c in cases))
        env = building.go_env({"TAS_ORACLE_IN": str(given), "TAS_ORACLE_OUT": str(answered),
                               "GOFLAGS": "-mod=mod", "GOPROXY": "off"})
        done = subprocess.run([building.find_go(), "test", "./pkg/cache/scheduler/", "-run", "TestTASOracle$",
                               "-count=1"], cwd=module, env=env, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise SystemExit(f"Kueue's placement test failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
        return [json.loads(line)["results"] for line in answered.read_text().splitlines()]


def _normal(results: list[dict]) -> list[dict]:
    """Kueue's JSON writes an assignment without domains as null domains; ours as an empty list."""
    return [{**r, "assignment": None if r["assignment"] is None else
             {**r["assignment"], "Domains": r["assignment"]["Domains"] or []}} for r in results]


def kueue_placed_nothing(difference: dict) -> bool:
    """A difference where Kueue v0.17.0 "placed" a leader-and-workers group on no domain at all: its
    updateCountsToMinimumGeneric ran out of domains ("code assumptions violated", logged) and returned no
    domains and no reason, so the group would be admitted with empty assignments; ours refuses it."""
    refused = [r["podSet"] for r in difference[names.REFERENCE] if r["reason"].startswith(domainchoosing.VIOLATED)]
    empty = {r["podSet"] for r in difference["kueue"]
             if not r["reason"] and r["assignment"] is not None and not r["assignment"]["Domains"]}
    return bool(refused) and set(refused) <= empty


def summarize(cases: list[dict], differing: list[dict], theirs: list[list[dict]], version: str) -> dict:
    placed = sum(1 for results in theirs for r in results if r["assignment"] is not None)
    refused = sum(1 for results in theirs for r in results if r["reason"])
    quirk = sum(1 for d in differing if kueue_placed_nothing(d))
    return {"schema_version": SCHEMA_VERSION, "kueue_version": version, "cases": len(cases),
            "seeds": [cases[0]["name"], cases[-1]["name"]], "agree": len(cases) - len(differing),
            "differ_where_kueue_places_a_group_on_no_domain": quirk, "differ_otherwise": len(differing) - quirk,
            "pod_sets_placed_by_kueue": placed, "pod_sets_refused_by_kueue": refused}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--kueue-version", default=versions.load_pins().kueue_tas_placement_from,
                        help="A version listed in harness/versions.toml (default: the one the core's placement "
                             "is ported from).")
    args = parser.parse_args()
    version = versions.kueue_version(args.kueue_version)
    started = time.time()
    cases = [random_case(seed) for seed in range(args.seed, args.seed + args.cases)]
    theirs = kueue(cases, version)
    differing = []
    for case, kueue_results in zip(cases, theirs):
        mine = ours(case)
        if _normal(mine) != _normal(kueue_results):
            differing.append({"case": case["name"], names.REFERENCE: mine, names.KUEUE: kueue_results})
    summary = {**summarize(cases, differing, theirs, version), "seconds": round(time.time() - started, 1),
               "command": " ".join([".venv/bin/python -m harness.agreeing.topologyplacements", *sys.argv[1:]])}
    args.out.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out / "cases.jsonl.gz", "wt") as written:
        written.write("".join(json.dumps(c, sort_keys=True) + "\n" for c in cases))
    (args.out / "differing.json").write_text(json.dumps(differing, indent=1) + "\n")
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
