"""Runs one RunPlan with Locust inside this process: `python -m loadtests.engine --plan P --out DIR`.

Its own process because importing Locust monkey-patches the interpreter with gevent, which the
harness (threads, subprocesses, asyncio) must not inherit. With `workers > 0` this process is the
master and starts N `locust --worker` processes in its own process group; they are stopped here,
and the caller can kill the whole group if this process hangs.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import gevent
import psutil
import locust  # noqa: F401  (monkey-patches before anything else opens sockets)
from locust import LoadTestShape, argument_parser
from locust.env import Environment
from locust.runners import STATE_STOPPED, WORKER_REPORT_INTERVAL, MasterRunner
from locust.util.load_locustfile import load_locustfile

from loadtests import client, frames, settings as load_settings, shapes

log = logging.getLogger("kqbench.load")
SETTINGS_ERROR_FILE = "settings-error.txt"


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
    parser = argument_parser.get_empty_argument_parser()
    argument_parser.setup_parser_arguments(parser)
    parser._default_config_files = {}  # a stray locust.conf in the cwd must not change a run
    options = parser.parse([])
    options.headless = not plan.web
    setattr(options, client.SETTINGS_OPTION, plan.settings.to_json())
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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def snapshot(environment: Environment, elapsed: float) -> frames.Sample:
    entries = tuple(
        frames.EntrySnapshot(verb=e.method or "", name=e.name, requests=e.num_requests, failures=e.num_failures,
                             bytes=e.total_content_length, total_ms=e.total_response_time,
                             histogram=dict(e.response_times))
        for e in environment.stats.entries.values()
    )
    return frames.Sample(t=elapsed, entries=entries)


def start_workers(plan: load_settings.RunPlan, port: int, log_dir: Path) -> list[subprocess.Popen]:
    workers = []
    for index in range(plan.workers):
        out = open(log_dir / f"worker-{index}.log", "wb")
        workers.append(subprocess.Popen(
            [sys.executable, "-m", "locust", "-f", plan.locustfile, "--worker", "--master-host", "127.0.0.1",
             "--master-port", str(port), "--loglevel", "WARNING"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        out.close()
    return workers


def stop_workers(workers: list[subprocess.Popen], grace: float = 15.0) -> None:
    deadline = time.monotonic() + grace
    for worker in workers:
        try:
            worker.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=5)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)


def run(plan: load_settings.RunPlan, out: Path) -> dict:
    """Run the plan to its end (time, request count, shape or SIGTERM); write frames into `out`."""
    plan.validate()
    out.mkdir(parents=True, exist_ok=True)
    shape = ScheduledShape(plan.shape) if plan.shape else None
    environment = Environment(user_classes=pick_users(plan), shape_class=shape, host=plan.settings.target.server,
                              parsed_options=parsed_options(plan), stop_timeout=0.0, catch_exceptions=True)
    stopping = {"why": ""}

    def on_signal() -> None:
        stopping["why"] = stopping["why"] or "signal"

    gevent.signal_handler(signal.SIGTERM, on_signal)
    gevent.signal_handler(signal.SIGINT, on_signal)
    workers: list[subprocess.Popen] = []
    samples: list[frames.Sample] = []
    wall_started = time.monotonic()
    try:
        if plan.workers:
            port = plan.master_port or free_port()
            runner = environment.create_master_runner(master_bind_host="127.0.0.1", master_bind_port=port)
            workers = start_workers(plan, port, out)
            deadline = time.monotonic() + plan.worker_start_timeout
            while runner.worker_count < plan.workers:
                dead = [w.args for w in workers if w.poll() is not None]
                if dead or time.monotonic() > deadline or stopping["why"]:
                    raise RuntimeError(f"{runner.worker_count}/{plan.workers} workers connected "
                                       f"({len(dead)} exited; see {out}/worker-*.log)")
                gevent.sleep(0.2)
        else:
            runner = environment.create_local_runner()
        if plan.web:
            environment.create_web_ui(host="127.0.0.1", port=plan.web_port)
            log.warning("Locust web UI: http://127.0.0.1:%d", plan.web_port)
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

        while not stopping["why"]:
            gevent.sleep(0.05)
            now = time.monotonic()
            guard = ""
            if now >= next_sample:
                samples.append(snapshot(environment, now - started))
                next_sample += plan.sample_seconds
                guard = memory_guard(plan.min_available_mb)
            # a signal caught during the sleep keeps its reason
            stopping["why"] = stopping["why"] or guard or bound_reached(now - started)
        load_seconds = time.monotonic() - started
        cpu_during_load = _cpu_seconds(resource.RUSAGE_SELF) - cpu_at_start
        runner.stop()
        if isinstance(runner, MasterRunner):
            # Workers report every WORKER_REPORT_INTERVAL; wait for the reports covering the last requests.
            gevent.sleep(WORKER_REPORT_INTERVAL + 0.5)
        if samples and load_seconds - samples[-1].t < plan.sample_seconds / 2:
            samples.pop()  # the final snapshot replaces a periodic one taken just before: no empty interval
        samples.append(snapshot(environment, load_seconds))
        runner.quit()
    finally:
        stop_workers(workers)
        if environment.web_ui and getattr(environment.web_ui, "server", None):
            environment.web_ui.stop()
    usage_self = resource.getrusage(resource.RUSAGE_SELF)
    usage_children = resource.getrusage(resource.RUSAGE_CHILDREN)
    errors = [(e.method or "", e.name, error_text(e.error), e.occurrences)
              for e in environment.stats.errors.values()]
    frames.history(samples).to_parquet(out / "history.parquet")
    frames.totals(samples[-1]).to_parquet(out / "totals.parquet")
    frames.latencies(samples[-1]).to_parquet(out / "latencies.parquet")
    frames.failures(errors).to_parquet(out / "failures.parquet")
    summary = {
        "stopped_by": stopping["why"],
        "load_seconds": round(load_seconds, 3),
        "wall_seconds": round(time.monotonic() - wall_started, 3),
        "requests": environment.stats.total.num_requests,
        "failures": environment.stats.total.num_failures,
        "workers": plan.workers,
        "cpu_seconds_master": round(usage_self.ru_utime + usage_self.ru_stime, 3),
        "cpu_seconds_workers": round(usage_children.ru_utime + usage_children.ru_stime, 3),
        "cpu_seconds_master_during_load": round(cpu_during_load, 3),
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
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
