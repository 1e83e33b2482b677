"""The reference scheduler (this project's, in Python) as an implementation under test.

`fields_of` is the one translation from a scenario's scheduler section to the process's settings:
every field of the section that names a scheduler setting goes through it (a unit test walks the
section's fields: the shared ones and `ReferenceFields`, those only this scheduler reads), and
`python -m scheduler` reads them back as one record. `start` and `restart` (a capacity search's new
scheduler behind the same /metrics port) are the only ways the process starts: the runner, the
differential tester, the tests and the benchmarks all come through them with a scheduler section.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pydantic
from pydantic import Field, model_validator

from harness.implementations import contract, names
from harness.implementations.reference import process as schedulerproc
from harness.kube import apiservice, kubeconfig
from harness.scenarios import base, sections
from harness.toolchain import versions
from scheduler import listening, settings as scheduler_settings
from scheduler.publishing import strategies

if TYPE_CHECKING:
    from harness.clusters import state

NAME = names.REFERENCE
RUNNER_FIELDS = ("enabled", "implementation")
"""Fields of the scheduler section the runner reads itself; every other one but another implementation's
own reaches our process."""
_PROCESS = scheduler_settings.SchedulerSettings(kubeconfig="")


class _ReferenceBase(base.Model):
    @model_validator(mode="before")
    @classmethod
    def _client_limits_are_its_own_defaults(cls, data: Any) -> Any:
        # Another implementation's shipped limits are its own business (Kueue reads them from its module).
        if isinstance(data, dict) and data.get("implementation", NAME) == NAME:
            data = {**data, "qps": _PROCESS.qps if data.get("qps") is None else data["qps"],
                    "burst": _PROCESS.burst if data.get("burst") is None else data["burst"]}
        return data


def _attribute_docs(cls: type) -> dict[str, str]:
    """The docstring under each annotated attribute of a class (as pydantic's use_attribute_docstrings reads them)."""
    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    return {node.target.id: " ".join(after.value.value.split())
            for node, after in zip(body, body[1:])
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)}


def _reference_fields() -> type[base.Model]:
    """The scenario's fields of every setting only the reference scheduler reads (scheduler.settings marks
    them `reference_only`): same name, type, default, bounds and docstring. One that follows a Kueue
    default of harness/versions.toml is None by default: then the run's Kueue version decides."""
    docs = _attribute_docs(scheduler_settings.SchedulerSettings)
    types = typing.get_type_hints(scheduler_settings.SchedulerSettings)
    by_version = versions.reference_settings(None)
    fields: dict[str, Any] = {}
    for setting in dataclasses.fields(scheduler_settings.SchedulerSettings):
        bounds = setting.metadata.get(scheduler_settings.REFERENCE_ONLY)
        if bounds is None:
            continue
        help_text = f"Reference scheduler only: {docs.get(setting.name, '')}"
        if setting.name in by_version:
            fields[setting.name] = (types[setting.name] | None, Field(None, description=(
                f"{help_text} None: as the run's Kueue version decides (scheduler.kueue_version, "
                "harness/versions.toml)."),
                **bounds))
        else:
            fields[setting.name] = (types[setting.name], Field(setting.default, description=help_text, **bounds))
    return pydantic.create_model("ReferenceFields", __base__=_ReferenceBase, __module__=__name__, **fields)


ReferenceFields = _reference_fields()
"""The scenario's scheduler fields only the reference scheduler reads (the section is assembled from them)."""


_SETTINGS = frozenset(f.name for f in dataclasses.fields(scheduler_settings.SchedulerSettings))
_PUBLISH = {"status_min_interval_seconds": "min_interval_seconds",
            "single_object_interval_seconds": "single_object_interval_seconds",
            "top_n": "topn", "refresh_seconds": "topn_interval_seconds"}
"""The section's publishing fields and the PublishSettings fields they set (the strategies' own record)."""


def fields_of(section: sections.SchedulerFields) -> dict:
    """The process's settings (SchedulerSettings fields) from the scenario's scheduler section (and, for the
    Kueue defaults the reference scheduler follows, harness/versions.toml). A section field named as a
    setting is that setting; only those whose form differs are translated here."""
    given = section.model_dump()
    fields = {name: value for name, value in given.items() if name in _SETTINGS}
    fields |= {name: _as_kueue(value, name, section.kueue_version) for name, value in fields.items()
               if name in versions.reference_settings(None)}
    return fields | dict(
        wait_for_pods_ready=section.wait_for_pods_ready_on(section.kueue_version),
        publish=strategies.PublishSettings(**{setting: given[name] for name, setting in _PUBLISH.items()}),
        qps=None if section.no_client_limit else section.qps,
        fair_sharing_strategies=tuple(section.fair_sharing_strategies.split(",")),
        resource_weights=tuple(section.resource_weights.items()))


def _as_kueue(value: bool | None, setting: str, kueue_version: str | None) -> bool:
    """A setting given in the scenario, else the one that decides as the run's Kueue version does."""
    return versions.reference_settings(kueue_version)[setting] if value is None else value


@dataclass(frozen=True, slots=True)
class ReferenceScheduler:
    """The running process as a SchedulerHandle."""

    process: schedulerproc.SchedulerProcess
    client_limits: contract.ClientLimits

    def pid(self) -> int | None:
        return self.process.pid()

    def metrics_url(self) -> str | None:
        return self.process.metrics_url

    def metrics_endpoint(self) -> contract.MetricsEndpoint | None:
        return contract.MetricsEndpoint("scheduler", self.process.metrics_url)

    def alive(self) -> bool:
        return self.process.alive()

    def log_tail(self, lines: int = 30) -> str:
        return self.process.log_tail(lines)

    def stop(self) -> None:
        self.process.stop()


def settings_of(cluster: state.ClusterInfo, section: sections.SchedulerFields, visibility_port: int,
                metrics_port: int, files: apiservice.ServingFiles) -> scheduler_settings.SchedulerSettings:
    """Everything the process runs with: the section's settings and where it listens on this cluster."""
    return scheduler_settings.SchedulerSettings(
        kubeconfig=cluster.kubeconfig, visibility_port=visibility_port, metrics_port=metrics_port,
        tls_cert=str(files.cert), tls_key=str(files.key), **fields_of(section))


def start(cluster: state.ClusterInfo, section: sections.SchedulerFields, log_dir: Path,
          metrics_port: int = 0) -> ReferenceScheduler:
    """CRDs, the APIService when the strategy serves the visibility API, then `python -m scheduler`
    (`metrics_port` 0: a free one). The one way the reference scheduler starts."""
    visibility_port, free = listening.pick_free(2)
    settings = settings_of(cluster, section, visibility_port, metrics_port or free,
                           schedulerproc.install(cluster, section.strategy, visibility_port))
    return ReferenceScheduler(schedulerproc.launch(settings, schedulerproc.log_path_of(cluster, log_dir)),
                              contract.ClientLimits(settings.qps, settings.burst))


def restart(cluster: state.ClusterInfo, section: sections.SchedulerFields, log_dir: Path,
            metrics_port: int) -> ReferenceScheduler:
    """start() on the /metrics port the run's collector scrapes (or a free one for 0); for the visibility
    strategies, once kube-apiserver reaches the new visibility port (registered anew)."""
    handle = start(cluster, section, log_dir, metrics_port)
    if strategies.get(section.strategy).visibility_api:
        try:
            apiservice.wait_available(kubeconfig.load(cluster.kubeconfig))
        except BaseException:
            handle.stop()
            raise
    return handle


IMPLEMENTATION = contract.Implementation(name=NAME, start=start, restart=restart,
                                         strategies=tuple(strategies.STRATEGIES),
                                         running=schedulerproc.running_on, scheduler_fields=ReferenceFields)
