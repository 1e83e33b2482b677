"""When a started Kueue manager serves: three steps in order, under one deadline.

1. its /readyz answers 200 (webhook certificates in place, CA injected into the converted CRDs);
2. kube-apiserver reports the visibility APIServices Available (it reached the visibility server);
3. one visibility request through kube-apiserver reaches Kueue (Available alone does not prove that
   the proxy trusts the server's certificate).

On a 2-core machine shared with running clusters each answer may be slow or refused for a while (a
loaded kube-apiserver times out, the aggregator answers 503 until it has probed the server), so a
failed probe is asked again until the deadline, and the error names the step and its last answer.
A manager that exits is a real failure and ends the wait at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from harness.errors import KqbenchError
from harness.kube import apiservice, calling, rest, waiting
from harness.kube.kubeconfig import Credentials

PROBE_PATH = "/apis/visibility.kueue.x-k8s.io/v1beta2"
POLL_SECONDS = 0.5

Probe = Callable[[], "str | None"]
"""None once the step holds, else what it saw (shown in the error if the deadline passes)."""


@dataclass(frozen=True, slots=True)
class Step:
    what: str
    """What must hold, as the error says it: "Kueue's /readyz answers 200"."""
    probe: Probe


def wait(steps: list[Step], exit_code: Callable[[], int | None], timeout: float,
         clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> None:
    """Poll each step until it holds, in order, all within `timeout` seconds; KqbenchError otherwise.

    `exit_code` is the manager's (None while it runs). A probe raising OSError or KqbenchError (timeouts,
    refused connections, unexpected statuses) counts as a "not yet" with the error as its answer.
    """
    deadline = clock() + timeout
    for step in steps:
        def holds(step: Step = step) -> bool:
            code = exit_code()
            if code is not None:
                raise KqbenchError(f"Kueue's manager exited with code {code} while waiting until {step.what}")
            try:
                seen = step.probe()
            except (OSError, KqbenchError) as error:  # slow or refused: not yet
                raise waiting.NotYet(f"{type(error).__name__}: {error}") from None
            if seen is not None:
                raise waiting.NotYet(seen)
            return True

        waiting.poll(holds, max(0.0, deadline - clock()), POLL_SECONDS,
                     lambda step=step: f"Kueue was not serving within {timeout:.0f}s: still waiting until {step.what}",
                     clock=clock, sleep=sleep)


def steps(creds: Credentials, readyz_url: str) -> list[Step]:
    return [Step("Kueue's /readyz answers 200", lambda: _readyz(readyz_url)),
            Step("kube-apiserver reports the visibility APIServices Available", lambda: apiservice.unavailable_reason(creds)),
            Step("a visibility request through kube-apiserver reaches Kueue", lambda: _proxied(creds))]


def _readyz(url: str) -> str | None:
    status, body = calling.call(url, timeout=5)
    if 200 <= status < 300:
        return None
    return f"{status} {body[-200:].decode(errors='replace').strip()}"


def _proxied(creds: Credentials) -> str | None:
    status, body = rest.get(creds, f"{PROBE_PATH}/clusterqueues/kqbench-readiness-probe/pendingworkloads")
    if status in (200, 404):  # 404: Kueue answered for an unknown ClusterQueue
        return None
    return f"{status}: {body[:300].decode(errors='replace').strip()}"

