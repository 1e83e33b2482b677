"""The scheduler is started one way: scenario section -> process settings -> one record -> read back.

The walks below fail for a field added to the scenario's scheduler section (or to the process's
settings) that does not reach the process.
"""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import click
import pytest

from harness.cli import scheduler as schedulercli
from harness.clusters import state
from harness.errors import KqbenchError
from harness.implementations import reference, registry as implementations
from harness.kube import apiservice
from harness.scenarios import models, sections
from harness.toolchain import versions
from scheduler import settings as scheduler_settings
from scheduler.publishing import strategies

CLUSTER = state.ClusterInfo(name="c", backend="kwok", kubeconfig="/k/kubeconfig", apiserver_url="https://127.0.0.1:1")
FILES = apiservice.ServingFiles(Path("/p/ca.crt"), Path("/p/tls.crt"), Path("/p/tls.key"))


def other_value(model, name: str):
    """A valid value of the field other than the model's (booleans flip, choices move on, numbers grow)."""
    value = getattr(model, name)
    annotation = type(model).model_fields[name].annotation
    if typing.get_origin(annotation) is typing.Literal:
        choices = [c for c in typing.get_args(annotation) if c != value]
        return choices[0] if choices else pytest.skip(f"{name} has one choice only")
    if isinstance(value, bool):
        return not value
    if value is None and annotation == bool | None:
        return True  # None follows the pinned Kueue version, which leaves it off
    if value is None:
        return 2  # an optional count or duration: None is Kueue's default (no limit, the timeout)
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * 2 + 0.5
    if value == {} and name == "resource_weights":
        return {"nvidia.com/gpu": 2.0}
    raise AssertionError(f"no other value for {name}={value!r}: extend other_value")


def process_settings(section: models.SchedulerSection) -> scheduler_settings.SchedulerSettings:
    """What `python -m scheduler` runs with when the runner starts this section (ports fixed)."""
    settings = reference.settings_of(CLUSTER, section, 8443, 9090, FILES)
    return scheduler_settings.from_record(scheduler_settings.to_record(settings))


OTHERS_FIELDS = tuple(f for i in implementations.implementations().values()
                      if i.name != reference.NAME and i.scheduler_fields for f in i.scheduler_fields.model_fields)
"""Fields only another implementation reads (real Kueue's, harness.implementations.kueue.fields)."""


@pytest.mark.parametrize("field", [f for f in models.SchedulerSection.model_fields
                                   if f not in reference.RUNNER_FIELDS + OTHERS_FIELDS])
def test_every_field_of_the_scenario_section_reaches_the_process(field):
    default = models.SchedulerSection()
    changed = models.SchedulerSection(**{**default.model_dump(), field: other_value(default, field)})
    assert process_settings(changed) != process_settings(default), f"scheduler.{field} never reaches the process"


def test_the_section_is_the_shared_fields_and_each_implementations_own():
    assert set(reference.RUNNER_FIELDS) <= set(models.SchedulerSection.model_fields)
    assert {"kueue_version", "kueue_concurrency", "kueue_log_level"} <= set(OTHERS_FIELDS)
    own = [set(f.model_fields) for f in implementations.scheduler_fields()]
    assert own[0].isdisjoint(own[1]) and set().union(*own) <= set(models.SchedulerSection.model_fields)


def test_section_defaults_are_the_process_defaults():
    assert process_settings(models.SchedulerSection()) == dataclasses.replace(
        scheduler_settings.SchedulerSettings(kubeconfig=CLUSTER.kubeconfig), visibility_port=8443, metrics_port=9090,
        tls_cert="/p/tls.crt", tls_key="/p/tls.key")


def _non_default(settings):
    """Every field (nested publish settings too) moved off its default."""
    changes = {}
    for f in dataclasses.fields(settings):
        value = getattr(settings, f.name)
        if dataclasses.is_dataclass(value):
            changes[f.name] = _non_default(value)
        elif f.name == "strategy":
            changes[f.name] = strategies.CQ_STATUS_TOPN
        elif f.name == "authorization":
            changes[f.name] = "off"
        elif f.name == "fair_sharing_strategies":
            changes[f.name] = ("LessThanInitialShare",)
        elif f.name == "resource_weights":
            changes[f.name] = (("cpu", 0.0), ("nvidia.com/gpu", 2.5))
        elif f.name == "wait_for_pods_ready_requeuing_timestamp":
            changes[f.name] = "Creation"
        elif value is None:
            changes[f.name] = True if f.name == "wait_for_pods_ready" else 2
        elif isinstance(value, bool):
            changes[f.name] = not value
        elif isinstance(value, str):
            changes[f.name] = value + "-x"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            changes[f.name] = value + 3
        else:
            raise AssertionError(f"no other value for {f.name}={value!r}: extend _non_default")
    return dataclasses.replace(settings, **changes)


def test_the_record_carries_every_process_setting():
    settings = _non_default(scheduler_settings.SchedulerSettings(kubeconfig="/k", tls_cert="c", tls_key="k"))
    assert scheduler_settings.from_record(scheduler_settings.to_record(settings)) == settings
    unlimited = dataclasses.replace(settings, qps=None)
    assert scheduler_settings.from_record(scheduler_settings.to_record(unlimited)).qps is None


def _run_with(*args: str) -> scheduler_settings.SchedulerSettings:
    """What `python -m scheduler ARGS` would run with (parsed, not run)."""
    parsed: list[scheduler_settings.SchedulerSettings] = []
    scheduler_settings.command(parsed.append).main(list(args), prog_name="scheduler", standalone_mode=False)
    return parsed[0]


def test_the_process_reads_its_settings_from_the_one_record():
    record = scheduler_settings.to_record(scheduler_settings.SchedulerSettings(kubeconfig="/k", max_unwritten=7))
    assert _run_with("--settings", record).max_unwritten == 7


def test_a_bad_record_is_a_usage_error_naming_what_is_wrong():
    record = json.loads(scheduler_settings.to_record(scheduler_settings.SchedulerSettings(kubeconfig="/k")))
    with pytest.raises(click.MissingParameter, match="record"):
        _run_with()
    with pytest.raises(click.UsageError, match="not JSON"):
        _run_with("--settings", "{kubeconfig")
    with pytest.raises(click.UsageError, match="no kubeconfig"):
        _run_with("--settings", json.dumps({k: v for k, v in record.items() if k != "kubeconfig"}))
    with pytest.raises(click.UsageError, match="names no setting topN"):
        _run_with("--settings", json.dumps({**record, "topN": 3}))
    with pytest.raises(click.UsageError, match="topn must be between 1 and 4000"):
        _run_with("--settings", json.dumps({**record, "publish": {**record["publish"], "topn": 0}}))
    with pytest.raises(click.UsageError, match=r"resourceWeights\[cpu\] must not be negative"):
        _run_with("--settings", json.dumps({**record, "resource_weights": [["cpu", -1]]}))
    with pytest.raises(click.UsageError, match="not a list Kueue accepts"):
        _run_with("--settings", json.dumps({**record, "fair_sharing_strategies":
                                            ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]}))


def test_kqbench_scheduler_run_has_an_option_per_section_field():
    options = {p.name for p in schedulercli.run.params}
    fields = set(models.SchedulerSection.model_fields) - {"enabled"}
    assert fields <= options, f"kqbench scheduler run lacks {sorted(fields - options)}"
    section = schedulercli.section_of({name: getattr(models.SchedulerSection(), name) for name in fields})
    assert section == models.SchedulerSection()


def test_implementations_are_registered_by_name():
    assert implementations.get("reference").name == "reference"
    with pytest.raises(KeyError, match="'nope' is unknown: use one of reference"):
        implementations.get("nope")


def test_every_strategy_has_a_query_mode_the_querier_drives():
    from loadtests import settings as load_settings

    assert {s.query_mode for s in strategies.STRATEGIES.values()} <= set(load_settings.QUERY_MODES)
    assert set(typing.get_args(sections.Strategy)) == set(strategies.STRATEGIES)


@pytest.mark.parametrize("module", ["harness.implementations.reference", "harness.implementations.kueue.starting"])
def test_an_implementation_module_imports_first_without_a_cycle(module):
    import subprocess
    import sys

    code = f"import {module}; from harness.implementations import registry; print(sorted(registry.implementations()))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "['kueue', 'reference']", result.stderr[-2000:]


def test_kueue_serves_only_the_visibility_api_strategies():
    with pytest.raises(ValueError, match="publishes positions only as"):
        models.SchedulerSection(implementation="kueue", strategy="status-field")
    assert models.SchedulerSection(implementation="kueue", strategy="aggregated-snapshot").implementation == "kueue"


def _section_of_command_line(*args: str) -> models.SchedulerSection:
    """The section `kqbench scheduler run ARGS` would start (parsed, not run)."""
    params = schedulercli.run.make_context("run", list(args)).params
    return schedulercli.section_of({k: v for k, v in params.items() if k not in ("name", "kubeconfig_path", "log_dir")})


def test_kqbench_scheduler_run_takes_the_options_it_always_took():
    section = _section_of_command_line("--no-client-limit", "--manage-jobs", "--no-page-cache", "--top-n", "20",
                                       "--strategy", "cq-status-topn", "--resource-weights", "cpu=0,nvidia.com/gpu=2",
                                       "--fair-sharing", "--min-cycle-seconds", "0.5", "--write-pending-reasons")
    assert (section.no_client_limit, section.manage_jobs, section.page_cache, section.top_n) == (True, True, False, 20)
    assert section.resource_weights == {"cpu": 0.0, "nvidia.com/gpu": 2.0} and section.strategy == "cq-status-topn"
    assert (section.fair_sharing, section.min_cycle_seconds, section.write_pending_reasons) == (True, 0.5, True)
    kueue = _section_of_command_line("--implementation", "kueue", "--strategy", "aggregated-snapshot",
                                     "--kueue-concurrency", "Job.batch=50", "--kueue-concurrency",
                                     "Workload.kueue.x-k8s.io = 8", "--kueue-log-level", "3", "--qps", "40")
    assert kueue.kueue_concurrency == {"Job.batch": 50, "Workload.kueue.x-k8s.io": 8}
    assert (kueue.kueue_log_level, kueue.qps, kueue.burst) == (3, 40.0, None)


def test_a_bad_option_value_is_one_line_naming_the_option():
    with pytest.raises(click.BadParameter, match="'Job.batch': use KEY=VALUE"):
        _section_of_command_line("--kueue-concurrency", "Job.batch")
    with pytest.raises(KqbenchError, match=r"--top-n: .*less than or equal to 4000 \(got 5000\)"):
        _section_of_command_line("--top-n", "5000")
    with pytest.raises(KqbenchError, match="--kueue-log-level: .*less than or equal to 10"):
        _section_of_command_line("--kueue-log-level", "11")
    with pytest.raises(KqbenchError, match="--kueue-concurrency: .*greater than 0"):
        _section_of_command_line("--kueue-concurrency", "Pod=0")


@pytest.mark.parametrize(("kueue_version", "given", "expected"), [
    (None, None, False), ("v0.19.2", None, True), ("v0.19.2", False, False), ("v0.17.0", True, True)])
def test_the_reference_scheduler_decides_as_the_runs_kueue_version_unless_told(kueue_version, given, expected):
    for setting in ("preserve_scan_progress", "preemption_ignores_pods"):
        section = models.SchedulerSection(kueue_version=kueue_version, **{setting: given})
        assert getattr(process_settings(section), setting) is expected, setting


def test_every_setting_the_kueue_version_decides_is_a_process_setting_and_a_section_field():
    for setting in versions.reference_settings(None):
        assert setting in {f.name for f in dataclasses.fields(scheduler_settings.SchedulerSettings)}
        assert models.SchedulerSection.model_fields[setting].default is None, setting


def test_every_reference_only_setting_is_read_by_its_name():
    """A setting marked reference_only reaches the scheduler's parts by name (scheduler.settings.named_for):
    one that no part takes as a parameter would be a scenario field that changes nothing."""
    import inspect

    from scheduler.controller import controlling
    from scheduler.core.queues import QueueManager

    readers = set(inspect.signature(QueueManager).parameters) | set(inspect.signature(controlling.ControllerSettings).parameters)
    marked = [f.name for f in dataclasses.fields(scheduler_settings.SchedulerSettings)
              if scheduler_settings.REFERENCE_ONLY in f.metadata]
    assert marked and set(marked) <= readers, sorted(set(marked) - readers)
    assert set(marked) == set(reference.ReferenceFields.model_fields)


def test_a_reference_only_setting_out_of_its_bounds_is_refused_by_the_scenario_and_the_process():
    with pytest.raises(ValueError, match="less than or equal to 10"):
        models.SchedulerSection(min_cycle_seconds=11)
    with pytest.raises(ValueError, match=r"requeue_batch_seconds must be between 0 and 10 \(got -1\)"):
        scheduler_settings.SchedulerSettings(kubeconfig="/k", requeue_batch_seconds=-1)


@pytest.mark.parametrize(("kueue_version", "given", "expected"), [
    ("v0.17.0", None, False), ("v0.19.2", None, True), ("v0.19.2", False, False), ("v0.17.0", True, True)])
def test_wait_for_pods_ready_follows_the_kueue_version_unless_told(kueue_version, given, expected):
    section = models.SchedulerSection(kueue_version=kueue_version, wait_for_pods_ready=given)
    assert section.wait_for_pods_ready_on(kueue_version) is expected


def test_wait_for_pods_ready_goes_from_the_section_to_the_process_and_the_core_record():
    from scheduler.core import podsready

    section = models.SchedulerSection(
        wait_for_pods_ready=True, wait_for_pods_ready_timeout_seconds=10, wait_for_pods_ready_block_admission=True,
        wait_for_pods_ready_requeuing_timestamp="Creation", wait_for_pods_ready_backoff_limit_count=2,
        wait_for_pods_ready_backoff_base_seconds=1, wait_for_pods_ready_backoff_max_seconds=30,
        wait_for_pods_ready_recovery_timeout_seconds=0)
    expected = podsready.WaitForPodsReady(True, 10.0, True, podsready.RequeuingTimestamp.CREATION, 2, 1, 30, 0.0)
    assert process_settings(section).core_wait_for_pods_ready() == expected
    assert scheduler_settings.wait_for_pods_ready_of(section, True) == expected
    assert process_settings(models.SchedulerSection()).core_wait_for_pods_ready().enable is False


def test_wait_for_pods_ready_out_of_kueues_bounds_is_refused():
    with pytest.raises(ValueError, match="greater than 0"):
        models.SchedulerSection(wait_for_pods_ready_timeout_seconds=0)
    with pytest.raises(ValueError, match="Eviction"):
        models.SchedulerSection(wait_for_pods_ready_requeuing_timestamp="Later")
    with pytest.raises(ValueError, match="backoffLimitCount must not be negative"):
        scheduler_settings.SchedulerSettings(kubeconfig="/k", wait_for_pods_ready=True,
                                             wait_for_pods_ready_backoff_limit_count=-1)
