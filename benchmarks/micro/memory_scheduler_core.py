"""Memory per pending workload in scheduler.core, measured with tracemalloc.

    .venv/bin/python benchmarks/micro/memory_scheduler_core.py \
        -o results/benchmarks/scheduler-core/memory_scheduler_core.json

Counts everything the core allocates for a pending workload: the Workload object, its
strings and keys, the manager's maps, the pending queue and the position index. Pod
sets are shared between identical shapes, as ``conversion.WorkloadDecoder`` shares them.
Also reports the cost of decoding from Kueue-shaped dicts (the dicts themselves freed).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scheduler_core_fixtures as fixtures  # noqa: E402

from scheduler.core import conversion, kinds  # noqa: E402
from scheduler.core.queues import QueueManager  # noqa: E402

SCHEMA_VERSION = 1
PENDING = 100_000


def _empty_manager(positions: str) -> QueueManager:
    manager = QueueManager(positions=positions)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    manager.add_cluster_queue(fixtures.cluster_queue("cq-0"))
    for lq in range(fixtures.LOCAL_QUEUES_PER_CLUSTER_QUEUE):
        manager.add_local_queue(kinds.LocalQueue("team-0", f"lq-{lq}", "cq-0"))
    return manager


def _as_dict(index: int) -> dict:
    """A Kueue-shaped Workload dict, built fresh so its strings are counted when kept."""
    return {
        "metadata": {
            "name": f"job-0-{index}",
            "namespace": "team-0",
            "uid": f"0000-{index:08d}-7d3c-4c1e-9a0b-5f7e8d9c0b1a",
            "creationTimestamp": f"2023-11-14T{index // 3600 % 24:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z",
        },
        "spec": {
            "queueName": f"lq-{index % fixtures.LOCAL_QUEUES_PER_CLUSTER_QUEUE}",
            "priority": index % 10,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {"spec": {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]}},
                }
            ],
        },
    }


def bytes_per_workload(positions: str, from_dicts: bool) -> float:
    manager = _empty_manager(positions)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    if from_dicts:
        decoder = conversion.WorkloadDecoder()
        for index in range(PENDING):
            manager.add_workload(decoder.decode(_as_dict(index)))
        del decoder
    else:
        workloads = fixtures.make_workloads(PENDING)
        for workload in workloads:
            manager.add_workload(workload)
        del workloads
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return (after - before) / PENDING


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    results = {
        "schema_version": SCHEMA_VERSION,
        "pending": PENDING,
        "python": platform.python_version(),
        "bytes_per_pending_workload": {
            "indexed": bytes_per_workload("indexed", from_dicts=False),
            "snapshot": bytes_per_workload("snapshot", from_dicts=False),
            "indexed_decoded_from_dicts": bytes_per_workload("indexed", from_dicts=True),
        },
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
