"""What a run needs built: each component named with its version (building.ensure builds them).

A scenario's needs follow from its cases alone: a local KWOK cluster needs the control plane at its
Kubernetes version, and each implementation names what it starts (harness.implementations.contract).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from harness.toolchain import versions

Name = Literal["kubernetes", "etcd", "kwok", "kueue", "versitygw"]


@dataclass(frozen=True, order=True, slots=True)
class Component:
    name: Name
    version: str

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def control_plane(k8s_version: str | None, pins: versions.Pins | None = None) -> tuple[Component, ...]:
    """What a local KWOK cluster runs: kube-apiserver & co at the Kubernetes version (None: the pinned one),
    the pinned etcd and kwok."""
    pins = pins or versions.load_pins()
    k8s = versions.normalise_k8s_version(k8s_version or pins.kubernetes_default)
    return Component("kubernetes", k8s), Component("etcd", pins.etcd), Component("kwok", pins.kwok)


def kueue(version: str | None, pins: versions.Pins | None = None) -> Component:
    """Real Kueue at a version of harness/versions.toml (None: its default)."""
    return Component("kueue", versions.kueue_version(version, pins))


def unique(components: Iterable[Component]) -> tuple[Component, ...]:
    """Each component once, in a stable order (control plane first, as it is built)."""
    order = {name: index for index, name in enumerate(("kubernetes", "etcd", "kwok", "versitygw", "kueue"))}
    return tuple(sorted(set(components), key=lambda c: (order[c.name], c.version)))
