"""The base of every scenario model, the drivers' phase models included: frozen, unknown fields rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
