"""Runs one RunPlan with Locust inside this process: `python -m loadtests.engine --plan P --out DIR`.

Its own process because importing Locust monkey-patches the interpreter with gevent, which the
harness (threads, subprocesses, asyncio) must not inherit. With workers (local `workers > 0`, or
`remote_workers` started by the user on other hosts) this process is Locust's master: it starts the
local ones in its own process group (stopped here; the caller can kill the group if this hangs),
waits until every expected worker said hello, and only then starts the users.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import resource
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import gevent
import psutil
import locust  # noqa: F401  (monkey-patches before anything else opens sockets)
from locust import LoadTestShape
from locust.env import Environment
from locust.runners import STATE_STOPPED, WORKER_REPORT_INTERVAL, MasterRunner
from locust.util.load_locustfile import load_locustfile

from loadtests import client, credentials, frames, localworkers, locustoptions, messaging, recording, shapes
from loadtests import settings as load_settings
from scheduler import listening

log = logging.getLogger("kqbench.load")
SETTINGS_ERROR_FILE = "settings-error.txt"
WORKERS_ERROR_FILE = "workers-error.txt"
HDR_FILE = "hdr.parquet"
"""Every request's latency per name in an HDR histogram (loadtests.recording), beside Locust's rounded ones."""


class ScheduledShape(LoadTestShape):
    """Locust adapter of a `shapes` profile."""

    def __init__(self, profile: load_settings.ShapeSettings) -> None:
        super().__init__()
        self.profile = shapes.check(profile)

    def tick(self):
        now = shapes.tick(self.profile, self.get_run_time())
        return None if now is None else (now.users, now.spawn_rate)


def parsed_options(plan: load_settings.RunPlan):
    """Locust's default options plus our settings (custom options are what the master sends workers)."""
    options = locustoptions.defaults()
    options.headless = not plan.web
    settings = plan.settings
    if plan.distributed:
        # Workers may be on other machines: credentials travel as contents, not as paths of this one.
        settings = dataclasses.replace(settings, target=credentials.portable(settings.target))
    setattr(options, client.SETTINGS_OPTION, settings.to_json())
    return options


def pick_users(plan: load_settings.RunPlan) -> list[type]:
    available, _shapes = load_locustfile(plan.locustfile)
    if not plan.user_weights:
        return list(available.values())
    unknown = set(plan.user_weights) - set(available)
    if unknown:
        raise load_settings.SettingsError(
            f"users {sorted(unknown)} are not in {plan.locustfile} (it has {', '.join(sorted(available))})")
    chosen = []
    for name, weight in plan.user_weights.items():
        if weight > 0:
            # Weights live on the class; only the master's classes matter (it dispatches counts to workers).
            available[name].weight = weight
            chosen.append(available[name])
    return chosen


def memory_guard(min_available_mb: int) -> str:
    """Why the run must stop for lack of memory, or "" (checked once per sample)."""
    available_mb = psutil.virtual_memory().available // (1024 * 1024)
    if min_available_mb and available_mb < min_available_mb:
        return f"memory guard: {available_mb} MiB available < {min_available_mb} MiB"
    return ""


def free_port(host: str = listening.LOOPBACK) -> int:
    """A free port on `host` (a wildcard: on the loopback, where the workers reach it)."""
    return listening.pick_free(1, localworkers.reachable_address(host))[0]


def snapshot(environment: Environment, elapsed: float) -> frames.Sample:
    entries = tuple(
        frames.EntrySnapshot(verb=e.method or "", name=e.name, requests=e.num_requests, failures=e.num_failures,
                             bytes=e.total_content_length, total_ms=e.total_response_time,
                             histogram=dict(e.response_times))
        for e in environment.stats.entries.values()
    )
    return frames.Sample(t=elapsed, entries=entries)


class WorkersMissing(RuntimeError):
    """Fewer workers joined than the plan expects; the message says how many and what to do."""


def wait_for_workers(plan: load_settings.RunPlan, side: messaging.MasterSide, local: list, port: int,
                     stopping: dict) -> None:
    """Block until every expected worker said hello; raise WorkersMissing (one line) when they do not."""
    deadline = time.monotonic() + plan.worker_start_timeout
    while side.joined() < plan.expected_workers:
        if side.problems:
            raise WorkersMissing(side.problems[0])
        if localworkers.exited(local) or time.monotonic() > deadline or stopping["why"]:
            where = f"{plan.master_bind}:{port}"
            hint = (f"start them with `kqbench load --worker --master-host {localworkers.reachable_address(plan.master_bind)} "
                    f"--master-port {port}` on hosts that reach {where}" if plan.remote_workers
                    else "see worker-*.log next to this run's results")
            raise WorkersMissing(f"{side.joined()} of {plan.expected_workers} workers joined the master at {where} "
                                 f"within {plan.worker_start_timeout:.0f}s: {hint}")
        gevent.sleep(0.2)
    if side.problems:
        raise WorkersMissing(side.problems[0])


@dataclass(slots=True)
class Session:
    """One run of a plan in this process: what its steps share."""

    plan: load_settings.RunPlan
    out: Path
    environment: Environment
    shape: ScheduledShape | None
    side: messaging.MasterSide
    recorder: recording.Recorder
    stopping: dict = field(default_factory=lambda: {"why": ""})
    """Why the load stops ("" while it runs): a signal, the memory guard or a bound of the plan."""
    workers: list[subprocess.Popen] = field(default_factory=list)
    """The local workers this process started (stopped in `run`'s finally)."""
    samples: list[frames.Sample] = field(default_factory=list)
    wall_started: float = field(default_factory=time.monotonic)


@dataclass(frozen=True, slots=True)
class Driven:
    load_seconds: float
    cpu_during_load: float


def run(plan: load_settings.RunPlan, out: Path) -> dict:
    """Run the plan to its end (time, request count, shape or SIGTERM); write frames into `out`."""
    plan.validate()
    out.mkdir(parents=True, exist_ok=True)
    session = prepare(plan, out)
    try:
        runner = start_runner(session)
        driven = drive(session, runner)
        finish(session, runner, driven)
    finally:
        localworkers.stop(session.workers)
        if session.environment.web_ui and getattr(session.environment.web_ui, "server", None):
            session.environment.web_ui.stop()
    return write_results(session, driven)


def prepare(plan: load_settings.RunPlan, out: Path) -> Session:
    """The Locust environment of the plan's users, the signal handlers, the worker messaging and the recorder."""
    shape = ScheduledShape(plan.shape) if plan.shape else None
    environment = Environment(user_classes=pick_users(plan), shape_class=shape, host=plan.settings.target.server,
                              parsed_options=parsed_options(plan), stop_timeout=0.0, catch_exceptions=True)
    session = Session(plan, out, environment, shape,
                      messaging.MasterSide(user_classes=tuple(c.__name__ for c in environment.user_classes)),
                      recording.Recorder())

    def on_signal() -> None:
        session.stopping["why"] = session.stopping["why"] or "signal"

    gevent.signal_handler(signal.SIGTERM, on_signal)
    gevent.signal_handler(signal.SIGINT, on_signal)
    session.recorder.install(environment.events, "master" if plan.distributed else "local")
    return session


def start_runner(session: Session):
    """A master that waits for every expected worker (local ones started here), or a local runner; the web
    UI when asked for."""
    plan, environment = session.plan, session.environment
    if plan.distributed:
        port = plan.master_port or free_port(plan.master_bind)
        runner = environment.create_master_runner(master_bind_host=plan.master_bind, master_bind_port=port)
        session.side.install(environment, runner)
        session.workers = localworkers.start(plan.workers, plan.locustfile, plan.master_bind, port, session.out)
        try:
            wait_for_workers(plan, session.side, session.workers, port, session.stopping)
        except WorkersMissing:
            session.side.close(runner, rejoin=False)
            runner.quit()  # the workers that did join go home now, not at their heartbeat time-out
            raise
    else:
        runner = environment.create_local_runner()
    if plan.web:
        environment.create_web_ui(host=listening.LOOPBACK, port=plan.web_port)
        log.warning("Locust web UI: http://%s:%d", listening.LOOPBACK, plan.web_port)
    return runner


def drive(session: Session, runner) -> Driven:
    """Start the users and sample the stats until a stop reason holds; the load's seconds and this
    process's CPU seconds over them."""
    plan, environment, shape = session.plan, session.environment, session.shape
    if shape:
        runner.start_shape()
    else:
        runner.start(plan.users, spawn_rate=plan.spawn_rate)
    started = time.monotonic()
    cpu_at_start = _cpu_seconds(resource.RUSAGE_SELF)
    next_sample = started + plan.sample_seconds
    run_time = min(plan.run_time, shapes.duration(plan.shape)) if plan.shape else plan.run_time

    def bound_reached(elapsed: float) -> str:
        if elapsed >= run_time:
            return "run time"
        if plan.max_requests and environment.stats.total.num_requests >= plan.max_requests:
            return "request count"
        if shape and runner.state == STATE_STOPPED:
            return "shape ended"
        return ""

    stopping = session.stopping
    while not stopping["why"]:
        gevent.sleep(0.05)
        now = time.monotonic()
        guard = ""
        if now >= next_sample:
            session.samples.append(snapshot(environment, now - started))
            next_sample += plan.sample_seconds
            guard = memory_guard(plan.min_available_mb)
        # a signal caught during the sleep keeps its reason
        stopping["why"] = stopping["why"] or guard or bound_reached(now - started)
    return Driven(time.monotonic() - started, _cpu_seconds(resource.RUSAGE_SELF) - cpu_at_start)


def finish(session: Session, runner, driven: Driven) -> None:
    """Stop the users, take the last workers' reports and the final snapshot, let the workers go."""
    runner.stop()
    if isinstance(runner, MasterRunner):
        # Workers report every WORKER_REPORT_INTERVAL; wait for the reports covering the last requests.
        gevent.sleep(WORKER_REPORT_INTERVAL + 0.5)
    samples = session.samples
    if samples and driven.load_seconds - samples[-1].t < session.plan.sample_seconds / 2:
        samples.pop()  # the final snapshot replaces a periodic one taken just before: no empty interval
    samples.append(snapshot(session.environment, driven.load_seconds))
    if isinstance(runner, MasterRunner):
        session.side.close(runner, rejoin=session.plan.workers_rejoin)
    runner.quit()


def write_results(session: Session, driven: Driven) -> dict:
    """The frames as parquet files and summary.json in the run's folder; returns the summary."""
    plan, environment, side, out, samples = session.plan, session.environment, session.side, session.out, session.samples
    usage_self = resource.getrusage(resource.RUSAGE_SELF)
    usage_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    errors = [(e.method or "", e.name, error_text(e.error), e.occurrences)
              for e in environment.stats.errors.values()]
    frames.history(samples).to_parquet(out / "history.parquet")
    frames.totals(samples[-1]).to_parquet(out / "totals.parquet")
    frames.latencies(samples[-1]).to_parquet(out / "latencies.parquet")
    session.recorder.frame().to_parquet(out / HDR_FILE)
    frames.failures(errors).to_parquet(out / "failures.parquet")
    frames.workers(side.tallies.values()).to_parquet(out / "workers.parquet")
    summary = {
        "stopped_by": session.stopping["why"],
        "load_seconds": round(driven.load_seconds, 3),
        "wall_seconds": round(time.monotonic() - session.wall_started, 3),
        "requests": environment.stats.total.num_requests,
        "failures": environment.stats.total.num_failures,
        "workers": plan.workers,
        "remote_workers": plan.remote_workers,
        "cpu_seconds_reported_by_workers": round(sum(t.cpu_seconds for t in side.tallies.values()), 3),
        "cpu_seconds_master": round(usage_self.ru_utime + usage_self.ru_stime, 3),
        "cpu_seconds_workers": round(usage_children.ru_utime + usage_children.ru_stime, 3),
        "cpu_seconds_master_during_load": round(driven.cpu_during_load, 3),
        "user_classes": [c.__name__ for c in environment.user_classes],
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def error_text(error) -> str:
    from locust.stats import StatsError

    return StatsError.parse_error(error)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtests.engine", description=__doc__)
    parser.add_argument("--plan", required=True, help="RunPlan JSON file")
    parser.add_argument("--out", required=True, help="folder for history/totals/failures parquet + summary.json")
    args = parser.parse_args(argv)
    # Locust's web UI re-parses sys.argv for its own options; ours are consumed, so hide them.
    sys.argv = sys.argv[:1]
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    plan = load_settings.RunPlan.from_json(Path(args.plan).read_text())
    try:
        summary = run(plan, Path(args.out))
    except load_settings.SettingsError as error:
        # The caller turns this file back into a SettingsError: bad input is one line, not a log tail.
        (Path(args.out) / SETTINGS_ERROR_FILE).write_text(str(error))
        print(f"error: {error}", file=sys.stderr)
        return 2
    except WorkersMissing as error:
        (Path(args.out) / WORKERS_ERROR_FILE).write_text(str(error))
        print(f"error: {error}", file=sys.stderr)
        return 3
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
