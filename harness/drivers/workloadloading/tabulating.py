"""The workload-loading phase's tables and summary metrics (pure).

- `workload_loading`: one row per phase: how, how many, the seconds from its start until written, served by
  kube-apiserver and held pending by the scheduler, Workloads per second to pending, etcd's size after;
- `workload_loading_cpu`: per phase and process, the CPU seconds it spent in the phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from harness.drivers import contract

if TYPE_CHECKING:
    from harness.drivers.workloadloading import phases

TABLE = "workload_loading"
CPU_TABLE = "workload_loading_cpu"
TABLES = (TABLE, CPU_TABLE)
COLUMNS = ("phase", "implementation", "path", "count", "written_seconds", "served_seconds", "pending_seconds",
           "workloads_per_second_pending", "scheduler_pending_before", "etcd_db_size_bytes")
CPU_COLUMNS = ("phase", "component", "cpu_seconds")
PREFIX = "workload_loading"
APISERVER = "kube-apiserver"


@dataclass(frozen=True, slots=True)
class Stages:
    """Seconds from the phase's start until each stage was reached."""

    written: float
    served: float
    held: float


def frames(phase_name: str, implementation: str, phase: phases.LoadWorkloadsPhase, stages: Stages,
           pending_before: float, cpu: dict[str, float], etcd_db_size: int | None) -> dict[str, pd.DataFrame]:
    row = (phase_name, implementation, phase.path, phase.count, stages.written, stages.served, stages.held,
           phase.count / stages.held if stages.held > 0 else float("nan"), pending_before, etcd_db_size)
    return {TABLE: pd.DataFrame([row], columns=list(COLUMNS)).astype({"etcd_db_size_bytes": float}),
            CPU_TABLE: pd.DataFrame([(phase_name, c, s) for c, s in sorted(cpu.items())], columns=list(CPU_COLUMNS))}


def metrics(tables: contract.Tables, case: str) -> list[contract.Metric]:
    """Per phase: Workloads per second to pending, seconds to pending, kube-apiserver's CPU ms per Workload."""
    frame = tables.get(TABLE)
    if frame is None or frame.empty or "case" not in frame.columns:
        return []
    cpu = tables.get(CPU_TABLE)
    out = []
    for row in frame[frame["case"] == case].itertuples():
        name = f"{PREFIX}.{row.phase}"
        out += [contract.Metric(f"{name}.workloads_per_second", float(row.workloads_per_second_pending), "1/s", "higher"),
                contract.Metric(f"{name}.pending_seconds", float(row.pending_seconds), "s", "lower")]
        if cpu is not None and not cpu.empty:
            spent = cpu[(cpu["case"] == case) & (cpu["phase"] == row.phase) & (cpu["component"] == APISERVER)]
            if not spent.empty:
                out.append(contract.Metric(f"{name}.apiserver_cpu_ms_per_workload",
                                           float(spent["cpu_seconds"].iloc[0]) * 1000 / row.count, "ms", "lower"))
    return out
