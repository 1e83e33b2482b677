"""Typed settings of one load run: where the apiserver is, what each user does, how load is shaped.

Parsed once (from the CLI or a scenario) and handed to Locust as one JSON string, because Locust
forwards custom options from the master to its workers and nothing else.
"""

from __future__ import annotations

import json
import dataclasses
from dataclasses import asdict, dataclass, fields, is_dataclass
from typing import Any, get_type_hints

from loadtests import loopback
from scheduler import listening

SETTINGS_VERSION = 1


class SettingsError(ValueError):
    """A setting is out of range or unknown; the message says which and what is allowed."""


@dataclass(frozen=True, slots=True)
class Target:
    """The apiserver and the credentials to reach it; built by the harness from a kubeconfig."""

    server: str
    """https://127.0.0.1:PORT; another machine's apiserver only with `allow_remote`."""
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    token: str | None = None
    insecure: bool = False
    """Skip server verification (only for kubeconfigs that say insecure-skip-tls-verify)."""
    allow_remote: bool = False
    """The user's opt-in (--allow-remote) to load an apiserver that is not on a loopback address."""
    ca_pem: str | None = None
    cert_pem: str | None = None
    key_pem: str | None = None
    """The files' contents while the target travels to workers on other machines (loadtests.credentials)."""


@dataclass(frozen=True, slots=True)
class ClientSettings:
    network_timeout: float = 30.0
    """Seconds a read may block; longer than any watch hold so a quiet watch is not a failure."""
    connection_timeout: float = 10.0
    gzip: bool = True
    """Accept gzip like client-go does by default: big LIST answers then cost the apiserver compression CPU."""


@dataclass(frozen=True, slots=True)
class WorkloadKind:
    """One entry of the churn mix: how big a Workload is and how often it is picked."""

    weight: int = 1
    priority: int = 0
    pods: int = 1
    cpu: str = "1"
    memory: str = "1Gi"
    gpus: int = 0
    pod_sets: int = 1
    """Pod sets per Workload; each carries `pods` pods."""
    runtime_seconds: float = 30.0
    """How long an admitted Workload runs before the churn marks it Finished."""


@dataclass(frozen=True, slots=True)
class ChurnSettings:
    namespace: str = "kqbench-churn"
    local_queues: tuple[str, ...] = ("lq-0",)
    create_per_second: float = 2.0
    """Per user: creations are paced to this rate while pending depth is below the target."""
    pending_target: int = 50
    """Per user: creation pauses at this many pending Workloads, so depth reaches and holds it."""
    refresh_seconds: float = 2.0
    """Per user: how often the user LISTs its own Workloads to learn which were admitted."""
    mix: tuple[WorkloadKind, ...] = (WorkloadKind(),)
    priority_class: str | None = None
    """If set, spec.priorityClassName (a WorkloadPriorityClass); spec.priority is always written."""

    def per_user(self, users: int) -> "ChurnSettings":
        """Split a total rate and depth over `users` churn users."""
        users = max(1, users)
        return dataclasses.replace(self, create_per_second=self.create_per_second / users,
                        pending_target=max(1, self.pending_target // users))


QUERY_MODES = ("visibility-cq", "visibility-lq", "workload-status", "cq-status", "single-object")


@dataclass(frozen=True, slots=True)
class QuerySettings:
    mode: str = "visibility-cq"
    """Where positions are read: one of QUERY_MODES (each position strategy exposes them elsewhere)."""
    cluster_queue: str = "cq-0"
    namespace: str = "kqbench-churn"
    local_queue: str = "lq-0"
    limit: int = 100
    """Page size asked of the visibility API (Kueue clamps to 100000; its default is 1000)."""
    max_offset: int = 0
    """Offsets are drawn from [0, max_offset]: 0 asks for the head, larger values walk deep queues."""
    per_second: float = 1.0
    """Per user: query rate."""
    single_object_path: str | None = None
    """The object the single-object strategy keeps its list in; None: the scheduler's QueuePositions
    object of `cluster_queue` (/apis/kqbench.dev/v1alpha1/queuepositions/{cq}, see scheduler.publishing)."""


@dataclass(frozen=True, slots=True)
class BystanderSettings:
    namespace: str = "kqbench-bystanders"
    configmaps: int = 3
    """Per user: ConfigMaps it creates at start and then reads, patches and lists."""
    per_second: float = 2.0
    """Per user: request rate across its GET/PATCH/LIST mix."""
    value_bytes: int = 256
    """Size of the value each PATCH writes."""


LIST_MODES = ("rv0", "consistent", "paginated")
WATCH_MODES = ("watchlist", "list-watch")


@dataclass(frozen=True, slots=True)
class ListWatchSettings:
    resource: str = "pods"
    """A core v1 resource (pods, nodes, configmaps) or a full path like /apis/kueue.x-k8s.io/v1beta2/workloads."""
    namespace: str | None = None
    """None lists across all namespaces."""
    list_modes: tuple[str, ...] = LIST_MODES
    watch_modes: tuple[str, ...] = ("watchlist",)
    page_size: int = 500
    per_second: float = 0.5
    """Per Lister user: LISTs per second (one paginated LIST counts once)."""
    hold_seconds: int = 5
    """A Watcher keeps each watch open this long (server-side timeoutSeconds) before opening the next."""


@dataclass(frozen=True, slots=True)
class ShapeSettings:
    """How the number of users moves over time; `kind` picks which fields matter."""

    kind: str = "constant"
    """constant | steps | spike."""
    users: int = 10
    spawn_rate: float = 5.0
    step_users: int = 10
    step_seconds: float = 30.0
    steps: int = 3
    spike_users: int = 50
    spike_at: float = 30.0
    spike_seconds: float = 10.0
    duration: float = 60.0
    """Seconds after which the shape ends the run (constant and spike)."""


@dataclass(frozen=True, slots=True)
class LoadSettings:
    """Everything users read at runtime; forwarded to workers as JSON."""

    target: Target
    client: ClientSettings = ClientSettings()
    churn: ChurnSettings = ChurnSettings()
    query: QuerySettings = QuerySettings()
    bystander: BystanderSettings = BystanderSettings()
    listwatch: ListWatchSettings = ListWatchSettings()
    seed: int = 0
    """Seeds each user's random choices (mixed with the user's number) so runs repeat."""
    version: int = SETTINGS_VERSION

    def validate(self) -> "LoadSettings":
        if why := loopback.refusal(self.target.server, self.target.allow_remote):
            raise SettingsError(why)
        if self.query.mode not in QUERY_MODES:
            raise SettingsError(f"query mode {self.query.mode!r} is unknown: use one of {', '.join(QUERY_MODES)}")
        for mode in self.listwatch.list_modes:
            if mode not in LIST_MODES:
                raise SettingsError(f"list mode {mode!r} is unknown: use one of {', '.join(LIST_MODES)}")
        for mode in self.listwatch.watch_modes:
            if mode not in WATCH_MODES:
                raise SettingsError(f"watch mode {mode!r} is unknown: use one of {', '.join(WATCH_MODES)}")
        if not self.churn.mix or any(k.weight <= 0 or k.pods <= 0 or k.pod_sets <= 0 for k in self.churn.mix):
            raise SettingsError("churn mix needs at least one kind, each with weight, pods and pod_sets >= 1")
        if not self.churn.local_queues:
            raise SettingsError("churn needs at least one LocalQueue")
        return self

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "LoadSettings":
        data = json.loads(text)
        if data.get("version", 0) > SETTINGS_VERSION:
            raise SettingsError(f"load settings format {data['version']} is newer than this kqbench; upgrade it")
        return _build(cls, data)


def _build(kind: type, data: Any) -> Any:
    """Rebuild nested frozen dataclasses (tuples included) from their asdict() form."""
    if not is_dataclass(kind) or not isinstance(data, dict):
        return data
    hints = get_type_hints(kind)
    known = {f.name for f in fields(kind)}
    unknown = set(data) - known
    if unknown:
        raise SettingsError(f"{kind.__name__}: unknown settings {sorted(unknown)}")
    values = {}
    for name, value in data.items():
        hint = hints[name]
        if getattr(hint, "__origin__", None) is tuple and isinstance(value, list):
            (item_type, *_rest) = hint.__args__
            value = tuple(_build(item_type, v) for v in value)
        elif is_dataclass(hint) or any(is_dataclass(a) for a in getattr(hint, "__args__", ())):
            inner = hint if is_dataclass(hint) else next(a for a in hint.__args__ if is_dataclass(a))
            value = _build(inner, value)
        values[name] = value
    return kind(**values)


def host_port(text: str) -> tuple[str, int]:
    """'0.0.0.0:5557' -> ('0.0.0.0', 5557); '[::]:5557' -> ('::', 5557): where a master listens."""
    host, _, port = text.strip().rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise SettingsError(f"{text!r} is not HOST:PORT with a port in 1-65535 (e.g. 0.0.0.0:5557)")
    return host, int(port)


def user_weights(text: str) -> dict[str, int]:
    """Parse 'WorkloadChurn=2,Bystander=5' into {'WorkloadChurn': 2, 'Bystander': 5}."""
    weights: dict[str, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, count = part.partition("=")
        try:
            weights[name.strip()] = int(count) if count else 1
        except ValueError:
            raise SettingsError(f"user weight {part!r} is not NAME=INT") from None
        if weights[name.strip()] < 0:
            raise SettingsError(f"user weight {part!r} is negative")
    return weights



@dataclass(frozen=True, slots=True)
class RunPlan:
    """One load run: which users, how many, for how long, and what they read at runtime."""

    settings: LoadSettings
    locustfile: str
    """A locustfile path; the built-in one (loadtests/locustfile.py) has every kqbench user."""
    user_weights: dict[str, int] = dataclasses.field(default_factory=dict)
    """User class name -> weight; empty runs every user class of the locustfile with weight 1."""
    users: int = 10
    spawn_rate: float = 5.0
    """Users started per second."""
    run_time: float = 60.0
    """Seconds of load after the first user starts; the run always ends by then."""
    max_requests: int | None = None
    """Stop early once this many requests were reported (all names together)."""
    shape: ShapeSettings | None = None
    """If set, the shape drives users over time and `users`/`spawn_rate` are ignored."""
    workers: int = 0
    """0: one process (LocalRunner), unless remote workers are expected. N: a master and N local worker processes."""
    remote_workers: int = 0
    """Workers started by the user elsewhere (`kqbench load --worker`); the load starts once they all joined."""
    master_bind: str = listening.LOOPBACK
    """Address the master listens on for workers; another machine's workers need one they can reach."""
    master_port: int = 0
    """Port the master listens on for workers (0: a free one)."""
    workers_rejoin: bool = False
    """Tell the workers to wait for the next master when this run ends (a scenario's next phase)."""
    web: bool = False
    """Serve Locust's web UI on 127.0.0.1:web_port while the run goes (it starts by itself)."""
    web_port: int = 8089
    sample_seconds: float = 1.0
    """Interval of the per-name time series (percentiles are exact within each interval)."""
    worker_start_timeout: float = 60.0
    """Seconds to wait for all workers to join before giving up."""
    min_available_mb: int = 1024
    """Stop the run early when the machine has less memory available than this (0: never); a list storm
    that exhausts memory would otherwise have the kernel kill processes, ours or the apiserver."""
    version: int = SETTINGS_VERSION

    def validate(self) -> "RunPlan":
        self.settings.validate()
        if self.run_time <= 0:
            raise SettingsError(f"run time must be > 0 s (got {self.run_time})")
        if self.users < 0 or self.spawn_rate <= 0:
            raise SettingsError("users must be >= 0 and spawn rate > 0")
        if self.workers < 0 or self.remote_workers < 0:
            raise SettingsError("workers and remote workers must be >= 0")
        if self.remote_workers and not self.master_port:
            raise SettingsError("remote workers need a fixed master port: they are told it before the run starts")
        if self.max_requests is not None and self.max_requests <= 0:
            raise SettingsError("max requests must be > 0")
        if self.sample_seconds <= 0:
            raise SettingsError("sample interval must be > 0 s")
        if self.min_available_mb < 0:
            raise SettingsError(f"min available memory must be >= 0 MiB (got {self.min_available_mb})")
        return self

    @property
    def distributed(self) -> bool:
        """Whether a Locust master hands the users to worker processes (local, remote or both)."""
        return bool(self.workers or self.remote_workers)

    @property
    def expected_workers(self) -> int:
        return self.workers + self.remote_workers

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, indent=1)

    @classmethod
    def from_json(cls, text: str) -> "RunPlan":
        data = json.loads(text)
        if data.get("version", 0) > SETTINGS_VERSION:
            raise SettingsError(f"run plan format {data['version']} is newer than this kqbench; upgrade it")
        return _build(cls, data)


def from_mapping(data: dict, target: Target) -> LoadSettings:
    """LoadSettings from a scenario's `load:` mapping (sections client, churn, query, bystander, listwatch, seed)."""
    if "target" in data:
        raise SettingsError("load settings must not name a target: it comes from the cluster's kubeconfig")
    return _build(LoadSettings, {**data, "target": asdict(target)}).validate()
