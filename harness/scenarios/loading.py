"""From a scenario name or file to validated runs: YAML, `--set` overrides, sweep expansion.

Errors are one line naming the file, the line and the field, e.g.
`quick.yaml:14: scheduler.strategy: Input should be 'status-field', ... (got 'fastest')`.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pydantic
import yaml

from harness.errors import KqbenchError
from harness.scenarios import models


class ScenarioError(KqbenchError, ValueError):
    """A scenario that cannot run; the message names file, line and field."""


@dataclass(frozen=True, slots=True)
class Case:
    """One run of a scenario: a sweep point and a repeat index, with the scenario as resolved."""

    index: int
    params: dict[str, Any]
    """Sweep axis -> value of this point (empty without a sweep)."""
    repeat: int
    scenario: models.Scenario

    @property
    def id(self) -> str:
        """Stable, readable, usable as a folder name: `strategy=aggregated-indexed,pending=1000,r0`."""
        parts = [_id_part(axis, value) for axis, value in self.params.items()]
        return ",".join([*parts, f"r{self.repeat}"])

    @property
    def point(self) -> str:
        """The case id without its repeat: repeats of one point share it (compare takes their median)."""
        return self.id.rsplit(",", 1)[0] if self.params else "all"


def _id_part(axis: str, value: Any) -> str:
    """`strategy=x`; a mapping value (a whole section swept as a variant) lists its own keys, nested
    mappings too; an empty one is the field's default (`kueue_concurrency=default`)."""
    if isinstance(value, dict) and value:
        return ",".join(_id_part(key, item) if isinstance(item, dict) else f"{key}={item}"
                        for key, item in value.items())
    return f"{axis.rsplit('.', 1)[-1]}={'default' if value == {} else value}"


@dataclass(frozen=True, slots=True)
class Loaded:
    source: str
    scenario: models.Scenario
    """As resolved (overrides applied, sweep kept) — what run.json records."""
    cases: list[Case] = field(default_factory=list)
    overrides: tuple[str, ...] = ()


def shipped() -> list[str]:
    """Names of the scenarios that come with kqbench."""
    folder = resources.files("harness.scenarios")
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def locate(name_or_path: str) -> Path:
    """A file path as given, else a shipped scenario by name."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise ScenarioError(f"scenario file {name_or_path} does not exist")
        return path
    shipped_path = Path(str(resources.files("harness.scenarios").joinpath(f"{name_or_path}.yaml")))
    if not shipped_path.is_file():
        raise ScenarioError(f"scenario {name_or_path!r} is neither a file nor a shipped scenario "
                            f"({', '.join(shipped())})")
    return shipped_path


def load(name_or_path: str, overrides: list[str] | tuple[str, ...] = ()) -> Loaded:
    path = locate(name_or_path)
    return parse(path.read_text(), str(path), overrides)


def parse(text: str, source: str, overrides: list[str] | tuple[str, ...] = ()) -> Loaded:
    """Validate YAML text (pure): overrides first, then the scenario, then every sweep point."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ScenarioError(f"{source}{line}: not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{source}:1: a scenario is a mapping with at least `name:`")
    overridden: set[str] = set()
    for item in overrides:
        dotted, value = parse_override(item)
        set_path(data, dotted, value)
        overridden.add(dotted)
    scenario = _validate(data, node, source, overridden, origin="")
    cases = expand(scenario, data, node, source, overridden)
    return Loaded(source, scenario, cases, tuple(overrides))


def parse_override(item: str) -> tuple[str, Any]:
    """'scheduler.qps=20' -> ('scheduler.qps', 20.0-ish YAML value)."""
    dotted, sep, text = item.partition("=")
    if not sep or not dotted.strip():
        raise ScenarioError(f"--set {item!r}: use PATH=VALUE, e.g. --set scheduler.strategy=aggregated-indexed")
    try:
        value = yaml.safe_load(text) if text.strip() else ""
    except yaml.YAMLError:
        value = text
    return dotted.strip(), value


def set_path(data: dict, dotted: str, value: Any) -> None:
    """Set a dotted path in nested dicts, creating mappings on the way; `sweep.<axis>` keeps the axis whole."""
    if dotted.startswith("sweep."):
        data.setdefault("sweep", {})[dotted[len("sweep."):]] = value if isinstance(value, list) else [value]
        return
    keys = dotted.split(".")
    here = data
    for key in keys[:-1]:
        if not isinstance(here.get(key), dict):
            here[key] = {}
        here = here[key]
    here[keys[-1]] = value


def _merged(data: dict, dotted: str, value: Any) -> Any:
    """A mapping swept onto a mapping is merged into it: `sweep: {scheduler: [{strategy: x, qps: 50}]}`
    keeps the scenario's other scheduler fields (variants that differ in more than one field)."""
    here: Any = data
    for key in dotted.split("."):
        here = here.get(key) if isinstance(here, dict) else None
    return {**here, **value} if isinstance(value, dict) and isinstance(here, dict) else value


def expand(scenario: models.Scenario, data: dict, node, source: str, overridden: set[str]) -> list[Case]:
    """One case per sweep point (cartesian product, in file order) and repeat, in rounds: every point
    once, then every point again, so that a machine drifting over a long batch weighs on every point
    alike and a batch cut short still holds every point."""
    axes = list(scenario.sweep.items())
    points: list[tuple[dict, models.Scenario]] = []
    for values in itertools.product(*(v for _, v in axes)):
        point = copy.deepcopy(data)
        point.pop("sweep", None)
        params = {}
        for (axis, _), value in zip(axes, values):
            set_path(point, axis, _merged(point, axis, value))
            params[axis] = value
        points.append((params, _validate(point, node, source, overridden,
                                         origin="sweep " + ",".join(f"{k}={v}" for k, v in params.items()))))
    return [Case(index, params, repeat, resolved)
            for index, (repeat, (params, resolved)) in enumerate(itertools.product(range(scenario.repeat), points))]


def _validate(data: dict, node, source: str, overridden: set[str], origin: str) -> models.Scenario:
    try:
        return models.Scenario.model_validate(data)
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        loc = _field_path(first["loc"])
        dotted = ".".join(loc) or "(top level)"
        line = line_of(node, loc)
        # a rule across the whole scenario names what is wrong itself: its input is the whole file
        got = "" if first["type"] in ("missing", "extra_forbidden") or not loc else f" (got {first.get('input')!r})"
        where = next((f" (from --set {o})" for o in overridden if dotted.startswith(o)), "")
        if not where and origin:
            where = f" (in {origin})"
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] in ("union_tag_invalid", "union_tag_not_found"):
            message = f"a phase needs `kind:` one of {', '.join(models.PHASE_KINDS)} (or one of those as its name)"
        raise ScenarioError(f"{source}:{line}: {dotted}: {message}{got}{where}") from None


def _field_path(loc) -> list[str]:
    """pydantic puts the phase's discriminator value into loc after the phase key: drop it."""
    parts = [str(part) for part in loc]
    if len(parts) > 2 and parts[0] == "phases" and parts[2] in models.PHASE_KINDS:
        del parts[2]
    return parts


def line_of(node, loc: list[str]) -> int:
    """1-based line of the deepest YAML node along loc (a missing key points at its parent)."""
    line = node.start_mark.line + 1 if node is not None else 1
    for part in loc:
        child = None
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if str(key.value) == part:
                    child = value
                    line = key.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
            child = node.value[int(part)]
            line = child.start_mark.line + 1
        if child is None:
            break
        node = child
    return line
