"""Run ids, run folders and run.json: what ran, where, with which versions."""

from __future__ import annotations

import datetime as dt
import json
import platform
import re
import subprocess
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from importlib import metadata
from pathlib import Path

import psutil

from harness.errors import KqbenchError
from harness.results import machines

SCHEMA_VERSION = 1
"""run.json format; readers refuse newer ones. 1: first format."""
RUNS_DIR = Path("results") / "runs"
PACKAGES = ("kqbench", "click", "hdrhistogram", "kubernetes", "locust", "matplotlib", "pandas", "pyarrow", "pydantic", "PyYAML",
            "rich", "sortedcontainers", "aiohttp", "orjson", "prometheus_client", "psutil", "jinja2", "tenacity")


def new_run_id(scenario: str, now: dt.datetime) -> str:
    """`20250101-120000-quick`: sorts by time, readable, a valid folder and label value."""
    slug = re.sub(r"[^a-z0-9-]+", "-", scenario.lower()).strip("-")[:40] or "run"
    return f"{now.astimezone(dt.timezone.utc):%Y%m%d-%H%M%S}-{slug}"


def unique_folder(parent: Path, run_id: str) -> Path:
    """parent/run_id, or run_id-2, -3... if taken (two runs in one second)."""
    folder = parent / run_id
    for n in range(2, 100):
        if not folder.exists():
            break
        folder = parent / f"{run_id}-{n}"
    folder.mkdir(parents=True, exist_ok=False)
    return folder


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str]:
    versions = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = ""
    return versions


def git_sha(folder: Path | None = None) -> str:
    """HEAD of the kqbench checkout (with `-dirty` when files changed), '' outside git."""
    cwd = folder or Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    if sha.returncode != 0:
        return ""
    return sha.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def machine() -> dict:
    return {"cpus": psutil.cpu_count(), "memory_bytes": psutil.virtual_memory().total,
            "platform": platform.platform(), "python": platform.python_version(), "hostname": platform.node()}


@dataclass(slots=True)
class CaseRecord:
    id: str
    point: str
    params: dict
    repeat: int
    status: str = "pending"
    """pending | ok | failed | interrupted | skipped."""
    error: str = ""
    started_at: str = ""
    ended_at: str = ""
    phases: list[dict] = field(default_factory=list)
    """[{name, kind, started_at, ended_at, status}]."""
    binaries: dict[str, str] = field(default_factory=dict)
    """Versions of the cluster's binaries (from the cluster state)."""
    client_limits: dict = field(default_factory=dict)
    """The client-side limits its scheduler sent API requests under: {qps, burst}, qps null for none (empty
    when no scheduler started, and in runs recorded before)."""

    @classmethod
    def from_dict(cls, data: dict) -> "CaseRecord":
        return cls(**_known(cls, data))


@dataclass(slots=True)
class RunRecord:
    run_id: str
    scenario_name: str
    scenario_source: str
    scenario: dict
    """As resolved: overrides applied, the sweep kept (each case's params say its point)."""
    overrides: list[str]
    cases: list[CaseRecord] = field(default_factory=list)
    packages: dict[str, str] = field(default_factory=dict)
    machine: dict = field(default_factory=dict)
    fingerprint: machines.Fingerprint | None = None
    """CPU model, CPUs, memory, kernel (from /proc): what a baseline must share with a run to judge it."""
    git_sha: str = ""
    started_at: str = ""
    ended_at: str = ""
    status: str = "running"
    """running | ok | failed | interrupted: a folder whose status is not ok holds partial results."""
    stopped_at: str = ""
    """Where an interrupted run stopped (`case <id>: <step>`, or the writing of results); empty otherwise."""
    resumed: list[dict] = field(default_factory=list)
    """Each `kqbench run --resume` of the folder: when, the git sha and packages it ran with, and its cases."""
    schema_version: int = SCHEMA_VERSION

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict, source: str = "run.json") -> "RunRecord":
        """The record run.json holds; refuses newer formats, ignores keys this version does not know."""
        check_version(data, SCHEMA_VERSION, source)
        known = _known(cls, data)
        known["cases"] = [CaseRecord.from_dict(case) for case in data.get("cases", [])]
        known["fingerprint"] = machines.Fingerprint.from_dict(data.get("fingerprint"))
        try:
            return cls(**known)
        except TypeError as error:  # a required field is missing
            raise KqbenchError(f"{source} is not a complete run record: {error}") from None


def param(params: Mapping, dotted: str, default):
    """A case parameter given flat (`scheduler.strategy`) or nested (`{scheduler: {strategy}}`)."""
    if dotted in params:
        return params[dotted]
    head, _, rest = dotted.partition(".")
    value = params.get(head)
    if isinstance(value, Mapping) and rest:
        return param(value, rest, default)
    return default


def _known(cls, data: dict) -> dict:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def write_run(folder: Path, record: RunRecord) -> Path:
    """Write run.json atomically (it is rewritten after every case, so a crash leaves the last good one)."""
    path = folder / "run.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record.to_dict(), indent=2, sort_keys=True, default=str))
    tmp.replace(path)
    return path


def read_run(folder: Path) -> RunRecord:
    """run.json of a run folder as the RunRecord write_run took."""
    path = Path(folder) / "run.json"
    if not path.is_file():
        raise KqbenchError(f"{folder} is not a run folder: it has no run.json")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise KqbenchError(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict):
        raise KqbenchError(f"{path} is not a run record (a JSON object)")
    return RunRecord.from_dict(data, str(path))


def check_version(data: dict, supported: int, source: str) -> None:
    version = data.get("schema_version")
    if not isinstance(version, int):
        raise KqbenchError(f"{source} has no schema_version: not a kqbench results file")
    if version > supported:
        raise KqbenchError(f"{source} has schema_version {version}, newer than this kqbench reads ({supported}): "
                           "upgrade kqbench")


def now_iso(clock=None) -> str:
    moment = clock() if clock else dt.datetime.now(dt.timezone.utc)
    return moment.isoformat(timespec="seconds")
