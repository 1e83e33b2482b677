"""A collection kept up in a thread: list it, then watch it from the last resourceVersion, round after round.

Each round's watch request ends after a few seconds and the next resumes where it stopped (bookmarks keep the
resourceVersion fresh): short requests so that ``stop()`` never waits on an open stream for long, and a step the
owner takes after each round is at most that late. A 410 Gone lists again; a round that fails (the apiserver busy
or restarting) is tried again half a second later, and MAX_FAILED_ROUNDS of them in a row end the loop with one
line said.
"""

from __future__ import annotations

import threading
import urllib.error
from collections.abc import Callable

from harness.kube import rest
from harness.kube.kubeconfig import Credentials

MAX_FAILED_ROUNDS = 30
"""Rounds that fail in a row before the loop gives up (and says so; `error` holds the last failure)."""
RETRY_SECONDS = 0.5
FAILURES = (OSError, urllib.error.URLError, ValueError, KeyError)
"""What a round may fail by and be tried again: transport errors, a watch's ERROR event, a malformed answer."""


def list_all(creds: Credentials, path: str, observe: Callable[[dict], None]) -> str:
    """GET the collection `path` and each item to `observe`; returns the list's resourceVersion."""
    listed = rest.get_json(creds, path, timeout=60)
    for item in listed.get("items") or ():
        observe(item)
    return listed["metadata"]["resourceVersion"]


class WatchLoop:
    """Built by its owner, `start()`ed once the owner is ready for events, `stop()`ped at the end. The callbacks
    run in the loop's thread: `observe` each object added or modified, `forget` each deleted one."""

    def __init__(self, creds: Credentials, path: str, observe: Callable[[dict], None],
                 forget: Callable[[dict], None] = lambda obj: None, *, seconds: int, name: str, label: str,
                 say: Callable[[str], None] = print, relist: Callable[[], str] | None = None,
                 before_round: Callable[[], None] | None = None, after_round: Callable[[], None] | None = None,
                 version: str = "", rounds_called: str = "rounds") -> None:
        """`relist` (default: `list_all` of `path`) runs whenever there is no resourceVersion (at first unless
        `version` is given, and after a 410) and returns the one to watch from; `before_round` runs at the start
        of each round (its failures count as the round's), `after_round` after each round, failed or not.
        `label` and `rounds_called` make the give-up line: "<label>: gave up after 30 failed <rounds_called>: ..."."""
        self.creds, self.path, self.say = creds, path, say
        self._observe, self._forget = observe, forget
        self._relist = relist or (lambda: list_all(creds, path, observe))
        self._before_round, self._after_round = before_round, after_round
        self.seconds, self.label, self.rounds_called = seconds, label, rounds_called
        self.version = version
        """The last resourceVersion seen; empty when the collection is to be listed again."""
        self.error: str | None = None
        """The last failure: a round's, or one the owner records here."""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        """Ask the loop to end and wait for it, at most one watch request's length and a slow answer."""
        self._stop.set()
        self._thread.join(timeout=self.seconds + 40)

    @property
    def stopping(self) -> bool:
        """`stop()` was asked for: long work in a callback may end early."""
        return self._stop.is_set()

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                self._round()
                failures = 0
            except rest.Gone:
                self.version = ""
            except FAILURES as error:
                failures += 1
                self.error = str(error)
                if failures >= MAX_FAILED_ROUNDS:
                    self.say(f"{self.label}: gave up after {failures} failed {self.rounds_called}: {error}")
                    return
                self._stop.wait(RETRY_SECONDS)
            if self._after_round is not None:
                self._after_round()

    def _round(self) -> None:
        if self._before_round is not None:
            self._before_round()
        if not self.version:
            self.version = self._relist()
        if not self._stop.is_set():  # a relist may end early when stopped, with no resourceVersion
            rest.watch_from(self.creds, self.path, self.version, self.seconds, self._resume_at, self._observe,
                            self._forget)

    def _resume_at(self, version: str) -> None:
        self.version = version
