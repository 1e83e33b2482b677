"""A Locust worker of kqbench: `python -m loadtests.worker --master-host H --master-port P`.

It needs no settings of its own: the users' settings (credentials included) arrive from the master in
Locust's spawn message. It says hello (loadtests.messaging), runs the users the master hands it, and
ends when the master quits. Exit status tells the caller what next: 0 done, REJOIN the master asked
it to wait for the next master, NO_MASTER none answered within the connect time, RETRY no welcome
came (a master on its way out acknowledged us: connect again), REFUSED the master refused us.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys

import gevent
import locust  # noqa: F401  (monkey-patches before anything else opens sockets)
from locust import runners
from locust.env import Environment
from locust.util.load_locustfile import load_locustfile

from loadtests import locustoptions, messaging, recording

REJOIN = 10
RETRY = 11
NO_MASTER = 3
REFUSED = 4
WELCOME_SECONDS = 10.0
"""How long a worker waits for the master's answer to its hello before connecting again."""
log = logging.getLogger("kqbench.worker")


def run(master_host: str, master_port: int, locustfile: str, connect_timeout: float) -> int:
    """Serve one master until it quits; the exit status (0, REJOIN or NO_MASTER)."""
    available, _shapes = load_locustfile(locustfile)
    environment = Environment(user_classes=list(available.values()), parsed_options=locustoptions.defaults(),
                              catch_exceptions=True)
    # Locust retries the connection every CONNECT_TIMEOUT seconds, CONNECT_RETRY_COUNT times (module
    # settings, read at each retry); this process is one worker, so setting them here touches nobody else.
    runners.CONNECT_RETRY_COUNT = max(1, int(connect_timeout / runners.CONNECT_TIMEOUT))
    try:
        runner = environment.create_worker_runner(master_host, master_port)
    except ConnectionError:
        print(f"no master answered at {master_host}:{master_port} within {connect_timeout:.0f}s", file=sys.stderr)
        return NO_MASTER
    side = messaging.WorkerSide(user_classes=tuple(available))
    side.install(environment, runner)
    recording.Recorder().install(environment.events, "worker")
    side.hello(runner)
    gevent.signal_handler(signal.SIGTERM, runner.quit)
    gevent.signal_handler(signal.SIGINT, runner.quit)
    for _ in range(int(WELCOME_SECONDS / 0.1)):
        if side.welcome is not None:
            break
        gevent.sleep(0.1)
    if side.welcome is None or side.welcome.get("closing") or side.welcome.get("reason"):
        runner.quit()
        if side.welcome is None or side.welcome.get("closing"):
            return RETRY
        print(f"refused by the master: {side.welcome['reason']}", file=sys.stderr)
        return REFUSED
    runner.greenlet.join()  # ends at the master's quit, or when its heartbeats stop (Locust: 60 s)
    return REJOIN if side.rejoin else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m loadtests.worker", description=__doc__)
    parser.add_argument("--master-host", required=True)
    parser.add_argument("--master-port", type=int, default=5557)
    parser.add_argument("--locustfile", required=True)
    parser.add_argument("--connect-timeout", type=float, default=120.0,
                        help="seconds to keep trying to reach the master")
    args = parser.parse_args(argv)
    sys.argv = sys.argv[:1]
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return run(args.master_host, args.master_port, args.locustfile, args.connect_timeout)


if __name__ == "__main__":
    sys.exit(main())
