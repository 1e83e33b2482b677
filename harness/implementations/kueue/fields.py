"""The scenario's scheduler fields only real Kueue reads (the scheduler section is assembled from them).

A scenario writes them flat under `scheduler:` beside the fields both implementations read; the
reference scheduler runs the same with or without them, so a sweep over implementations keeps them.
"""

from __future__ import annotations

import re

from pydantic import Field, PositiveInt, field_validator

from harness.scenarios import base
from harness.toolchain import versions


class KueueFields(base.Model):
    kueue_concurrency: dict[str, PositiveInt] = {}
    """Kueue only: workers per reconciled kind over what Kueue ships (its controller.groupKindConcurrency:
    Job.batch 5, Workload.kueue.x-k8s.io 5, ...). The reference scheduler reconciles on one event loop
    and has no such pool, so it runs the same with or without this (a sweep over implementations keeps it)."""

    kueue_version: str | None = None
    """Kueue only: which Kueue of harness/versions.toml (None: its default); each runs with the
    Configuration its module ships, unless a field here overrides it."""

    kueue_log_level: int | None = Field(None, ge=0, le=10)
    """Kueue only: its --zap-log-level (None: Kueue's default). At 3 its scheduler logs every cycle,
    which `kqbench replay` reads back; that much logging slows Kueue, so figures of such a run are
    not a peer's figures."""

    @field_validator("kueue_concurrency")
    @classmethod
    def _kinds_are_kind_dot_group(cls, value: dict[str, int]) -> dict[str, int]:
        for key in value:
            if not re.fullmatch(r"[A-Z][A-Za-z0-9]*(\.[a-z0-9][a-z0-9.-]*)?", key):
                raise ValueError(f"kueue_concurrency key {key!r} is not Kind.group as Kueue names them "
                                 f"(Job.batch, Workload.kueue.x-k8s.io, Pod)")
        return value

    @field_validator("kueue_version")
    @classmethod
    def _kueue_version_is_known(cls, value: str | None) -> str | None:
        return None if value is None else versions.kueue_version(value)
