"""The scheduler implementations under test, keyed by name (scenario field `scheduler.implementation`).

The types are in `harness.implementations.contract`; this module is only the list and its look-ups.
Adding an implementation: a module or folder exporting `IMPLEMENTATION` (a contract.Implementation),
and one line in `_IMPLEMENTATIONS` below.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from pydantic import BaseModel

from harness.implementations import contract, kueue, reference

if TYPE_CHECKING:
    from harness.clusters import state

_IMPLEMENTATIONS = (
    reference,
    kueue,
)


@cache
def implementations() -> dict[str, contract.Implementation]:
    return {module.IMPLEMENTATION.name: module.IMPLEMENTATION for module in _IMPLEMENTATIONS}


def scheduler_fields() -> tuple[type[BaseModel], ...]:
    """Each implementation's own scheduler fields, in registry order (the scenario's section is made of them)."""
    return tuple(i.scheduler_fields for i in implementations().values() if i.scheduler_fields is not None)


def running_on(cluster: state.ClusterInfo) -> list[tuple[str, int]]:
    """(implementation, pid) of every scheduler live on the cluster."""
    return [(name, pid) for name, implementation in implementations().items() for pid in implementation.running(cluster)]


def get(name: str) -> contract.Implementation:
    try:
        return implementations()[name]
    except KeyError:
        raise KeyError(f"scheduler implementation {name!r} is unknown: use one of "
                       f"{', '.join(implementations())}") from None
