"""Click options made from a scenario model's fields, so that a setting is declared once: its field.

Each field `a_b` becomes `--a-b` with the field's default and its docstring as help:
- a bool defaulting to False is a flag (`--manage-jobs`), one defaulting to True a pair
  (`--page-cache/--no-page-cache`);
- a Literal is a choice; int, float and str (optional or not) take one value;
- a dict takes KEY=VALUE, repeated or comma-separated (`--kueue-concurrency Job.batch=50`,
  `--resource-weights cpu=0,nvidia.com/gpu=2`).
Values are checked by the model itself when the command builds it, not by click.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Iterable

import click
from pydantic import BaseModel
from pydantic.fields import FieldInfo

_SCALARS = {int: int, float: float, str: str}


def _bare(annotation):
    """The type under Annotated[...] and Optional[...]."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            (annotation,) = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        else:
            return annotation


def pairs(ctx: click.Context, param: click.Parameter, given: Iterable[str]) -> dict[str, str]:
    """KEY=VALUE items, each maybe comma-separated, as a dict (the model converts the values)."""
    found = {}
    for item in (part.strip() for text in given for part in text.split(",")):
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r}: use {param.metavar or 'KEY=VALUE'}")
        found[key.strip()] = value.strip()
    return found


def option(name: str, field: FieldInfo) -> Callable:
    """The click option of one field."""
    flag, bare, default = "--" + name.replace("_", "-"), _bare(field.annotation), field.default
    help_text = " ".join((field.description or "").split())
    if bare is bool:
        if default is False:
            return click.option(flag, name, is_flag=True, help=help_text)
        return click.option(f"{flag}/--no-{flag[2:]}", name, default=default, show_default=True, help=help_text)
    if typing.get_origin(bare) is dict:
        return click.option(flag, name, multiple=True, callback=pairs, metavar="KEY=VALUE,...", help=help_text)
    if typing.get_origin(bare) is typing.Literal:
        kind = click.Choice([str(choice) for choice in typing.get_args(bare)])
    elif bare in _SCALARS:
        kind = _SCALARS[bare]
    else:
        raise TypeError(f"field {name}: no command-line form for {field.annotation!r}")
    return click.option(flag, name, type=kind, default=default, show_default=default is not None, help=help_text)


def options(model: type[BaseModel], leave_out: Iterable[str] = ()) -> Callable:
    """A decorator adding an option per field of `model` (but those left out), in the fields' order."""
    chosen = [option(name, field) for name, field in model.model_fields.items() if name not in set(leave_out)]

    def decorate(function):
        for made in reversed(chosen):
            function = made(function)
        return function
    return decorate
