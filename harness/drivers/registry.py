"""The phase drivers, keyed by phase kind: the list the runner, the summaries and the report ask.

The types a driver implements are in `harness.drivers.contract`; this module is only the list and
its look-up by phase kind. Adding a driver: a new folder whose package exports `DRIVER` (built from
the contract), and one line in `_DRIVER_PACKAGES` below.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Annotated, Any, Union

from pydantic import BaseModel, Field

from harness.drivers import agreement, capacity, contract, faults, heldqueue, invariants, jobs, kueuebaseline, locust, tasobjectsize, watchcache, workloadloading

_DRIVER_PACKAGES = (
    locust,
    watchcache,
    kueuebaseline,
    capacity,
    invariants,
    faults,
    jobs,
    tasobjectsize,
    workloadloading,
    heldqueue,
    agreement,
)


def phase_kinds_of(driver: contract.Driver) -> tuple[str, ...]:
    """The `kind` values of a driver's phase models (each model's `kind` field is a one-value Literal)."""
    kinds = []
    for model in driver.phases:
        default = model.model_fields["kind"].default
        if not isinstance(default, str):
            raise TypeError(f"{model.__name__}: a phase model needs `kind: Literal[...] = \"...\"`")
        kinds.append(default)
    return tuple(kinds)


@dataclass(frozen=True, slots=True)
class Registry:
    """Drivers by phase kind; a kind belongs to exactly one driver."""

    drivers: tuple[contract.Driver, ...]
    _by_kind: dict[str, contract.Driver] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_kind: dict[str, contract.Driver] = {}
        for driver in self.drivers:
            for kind in phase_kinds_of(driver):
                if kind in by_kind:
                    raise ValueError(f"phase kind {kind!r} is claimed by {by_kind[kind].name} and {driver.name}")
                by_kind[kind] = driver
        object.__setattr__(self, "_by_kind", by_kind)

    def __iter__(self) -> Iterator[contract.Driver]:
        return iter(self.drivers)

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(self._by_kind)

    def for_kind(self, kind: str) -> contract.Driver:
        try:
            return self._by_kind[kind]
        except KeyError:
            raise KeyError(f"no driver runs phase kind {kind!r} (known: {', '.join(self._by_kind)})") from None

    def mix_fields(self) -> tuple[type[BaseModel], ...]:
        """Every driver's load.mix fields, each model once (drivers that share a library share its model)."""
        return tuple(dict.fromkeys(model for driver in self.drivers for model in driver.mix_fields))

    def phase_models(self) -> tuple[type[BaseModel], ...]:
        return tuple(model for driver in self.drivers for model in driver.phases)

    def phase_union(self) -> Any:
        """The pydantic type of one phase: the drivers' models, told apart by `kind`."""
        return Annotated[Union[self.phase_models()], Field(discriminator="kind")]  # noqa: UP007


@cache
def drivers() -> Registry:
    """Every registered driver."""
    return Registry(tuple(package.DRIVER for package in _DRIVER_PACKAGES))
