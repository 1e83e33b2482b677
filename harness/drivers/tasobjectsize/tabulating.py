"""The TAS object-size phase's tables, one emit per pod set (pure).

- `tas_object_size`: one row per pod set: admitted or not and after how long, hosts named, bytes stored in
  etcd and served as JSON, the model's bytes per encoding beside them, status writes refused;
- `tas_status_writes`: kube-apiserver's answers to workloads/status writes by code, until the bound
  (`until-bound`) and over the watch after it (`watched`);
- `tas_conditions`: the Workload's conditions at its bound.
Every row names its phase and pod set size (`phase`, `pods`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from harness.drivers.tasobjectsize import counting, modelling

TABLE = "tas_object_size"
WRITES_TABLE = "tas_status_writes"
CONDITIONS_TABLE = "tas_conditions"
TABLES = (TABLE, WRITES_TABLE, CONDITIONS_TABLE)
COLUMNS = ("phase", "implementation", "node_names", "nodes", "etcd_limit_bytes", "pods", "admitted",
           "seconds_to_admission", "hosts_in_assignment", "etcd_bytes", "api_json_bytes", "etcd_bytes_per_host",
           "status_writes", "status_writes_refused", "watched_seconds", "status_writes_refused_watched",
           "quota_reserved", *(f"model_{e.replace('-', '_')}_bytes" for e in modelling.ENCODINGS))
WRITES_COLUMNS = ("phase", "pods", "window", "code", "requests")
CONDITIONS_COLUMNS = ("phase", "pods", "type", "status", "reason", "message")
UNTIL_BOUND, WATCHED = "until-bound", "watched"


@dataclass(slots=True)
class Measured:
    """One pod set's Workload, as the phase saw it."""

    pods: int
    seconds_to_admission: float | None = None
    """None: not admitted within the bound."""
    hosts: int = 0
    etcd_bytes: int | None = None
    api_json_bytes: int | None = None
    conditions: list[dict] = field(default_factory=list)
    writes: dict[str, float] = field(default_factory=dict)
    """workloads/status writes by code from its creation to its bound or admission."""
    watched_seconds: float = 0.0
    writes_watched: dict[str, float] = field(default_factory=dict)
    """The same over `watched_seconds` after the bound (not admitted only)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """What the case was: the same for every pod set of a phase."""

    implementation: str
    node_names: str
    nodes: int
    etcd_limit: int


def frames(phase_name: str, setting: Setting, measured: Measured, model: dict[str, int]) -> dict[str, pd.DataFrame]:
    """The three tables' rows of one pod set."""
    admitted = measured.seconds_to_admission is not None
    row = {"phase": phase_name, "implementation": setting.implementation, "node_names": setting.node_names,
           "nodes": setting.nodes, "etcd_limit_bytes": setting.etcd_limit, "pods": measured.pods, "admitted": admitted,
           "seconds_to_admission": measured.seconds_to_admission, "hosts_in_assignment": measured.hosts,
           "etcd_bytes": measured.etcd_bytes, "api_json_bytes": measured.api_json_bytes,
           "etcd_bytes_per_host": (measured.etcd_bytes / measured.hosts
                                   if measured.etcd_bytes is not None and measured.hosts else None),
           "status_writes": sum(measured.writes.values()), "status_writes_refused": counting.refused(measured.writes),
           "watched_seconds": measured.watched_seconds,
           "status_writes_refused_watched": counting.refused(measured.writes_watched),
           "quota_reserved": any(c["type"] == "QuotaReserved" and c["status"] == "True" for c in measured.conditions),
           **{f"model_{e.replace('-', '_')}_bytes": model[e] for e in modelling.ENCODINGS}}
    writes = [(phase_name, measured.pods, window, code, count)
              for window, codes in ((UNTIL_BOUND, measured.writes), (WATCHED, measured.writes_watched))
              for code, count in sorted(codes.items())]
    conditions = [(phase_name, measured.pods, c["type"], c["status"], c["reason"], c["message"]) for c in measured.conditions]
    return {TABLE: pd.DataFrame([row], columns=list(COLUMNS)).astype({"seconds_to_admission": float}),
            WRITES_TABLE: pd.DataFrame(writes, columns=list(WRITES_COLUMNS)),
            CONDITIONS_TABLE: pd.DataFrame(conditions, columns=list(CONDITIONS_COLUMNS))}


def line(measured: Measured) -> str:
    """One progress line of a measured pod set."""
    if measured.seconds_to_admission is None:
        return (f"not admitted; {counting.refused(measured.writes):.0f} status writes refused, "
                f"{counting.refused(measured.writes_watched):.0f} more in the {measured.watched_seconds:.0f}s after")
    return (f"admitted after {measured.seconds_to_admission:.1f}s, {measured.hosts:,} hosts, "
            f"{measured.etcd_bytes or 0:,} bytes in etcd")
