"""The base of every scenario model, the drivers' phase models included: frozen, unknown fields rejected.

A field's docstring is its description (`use_attribute_docstrings`): `kqbench scheduler run` shows
it as the option's help, so the one declaration of a setting also says what it is.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
