"""A thin Kubernetes REST client for Locust users: TLS from a Target, keep-alive, named reports.

Built on Locust's FastHttpUser (geventhttpclient): one keep-alive connection pool per user, and
every request reported under a `naming.RequestName` with the apiserver's verb as its type. Failure
reasons are `CODE Reason` from the Kubernetes Status body (or the connection error's class), so
failures group by cause, not by URL.
"""

from __future__ import annotations

import dataclasses
import time
import uuid
from dataclasses import dataclass

import gevent.ssl
import orjson
from locust.contrib.fasthttp import FastHttpUser

from loadtests import credentials, naming, settings as load_settings, watching

SETTINGS_OPTION = "kqbench_settings"
"""Attribute of Locust's parsed_options holding LoadSettings JSON (custom options reach workers in the spawn
message; a master puts them there with credentials as contents, see loadtests.credentials)."""

_HTTP_METHOD = {"LIST": "GET", "WATCH": "GET"}


def settings_of(environment) -> load_settings.LoadSettings:
    """The LoadSettings a runner put into the environment's options (master, worker or local)."""
    options = getattr(environment, "parsed_options", None)
    text = getattr(options, SETTINGS_OPTION, None) if options is not None else None
    if not text:
        raise load_settings.SettingsError(
            "no kqbench settings in Locust's options: start load through `kqbench load` or loadtests.running.run")
    settings = load_settings.LoadSettings.from_json(text)
    # On a worker of another machine the credentials came as contents: they become private files here.
    return dataclasses.replace(settings, target=credentials.materialised(settings.target))


class TlsContextFactory:
    """What geventhttpclient calls to make its SSL context: our CA and client certificate.

    geventhttpclient passes `cafile=` (its certifi bundle); the kubeconfig's CA replaces it.
    """

    def __init__(self, target: load_settings.Target) -> None:
        self.target = target

    def __call__(self, cafile: str | None = None, **_ignored) -> gevent.ssl.SSLContext:
        context = gevent.ssl.create_default_context(cafile=self.target.ca_file)
        if self.target.insecure:
            context.check_hostname = False
            context.verify_mode = gevent.ssl.CERT_NONE
        if self.target.cert_file:
            context.load_cert_chain(self.target.cert_file, self.target.key_file)
        return context


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def json(self) -> dict:
        return orjson.loads(self.body) if self.body else {}


def failure_reason(status: int, body: bytes | None, error: Exception | None = None) -> str:
    """`404 NotFound`, `503 ServiceUnavailable`, or the connection error's class when no answer came."""
    if status == 0:
        return f"no answer: {type(error).__name__ if error else 'connection failed'}"
    reason = ""
    if body:
        try:
            reason = orjson.loads(body).get("reason", "")
        except (orjson.JSONDecodeError, AttributeError):
            reason = ""
    return f"{status} {reason}".strip()


class KubeUser(FastHttpUser):
    """Base of every kqbench user: credentials and settings come from the environment."""

    abstract = True
    concurrency = 2
    max_retries = 0

    def __init__(self, environment) -> None:
        self.settings = settings_of(environment)
        target = self.settings.target
        # FastHttpUser reads these attributes in its __init__; per-instance values win over class ones.
        self.host = target.server
        self.insecure = target.insecure
        self.ssl_context_factory = TlsContextFactory(target)
        self.network_timeout = self.settings.client.network_timeout
        self.connection_timeout = self.settings.client.connection_timeout
        headers = {"Accept": "application/json", "User-Agent": f"kqbench-load/{type(self).__name__}"}
        headers["Accept-Encoding"] = "gzip" if self.settings.client.gzip else "identity"
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        self.default_headers = headers
        super().__init__(environment)
        self.user_id = f"{type(self).__name__.lower()}-{uuid.uuid4().hex[:8]}"

    def call(self, verb: str, path: str, mode: str, *, body: dict | None = None,
             content_type: str = "application/json", accept: tuple[int, ...] = ()) -> Reply:
        """One request reported as `VERB resource mode`; statuses in `accept` count as successes too."""
        name = naming.RequestName(verb, naming.resource_of(path), mode)
        headers = {"Content-Type": content_type} if body is not None else None
        data = orjson.dumps(body) if body is not None else None
        with self.client.request(_HTTP_METHOD.get(verb, verb), path, name=str(name), data=data, headers=headers,
                                 catch_response=True) as response:
            response.request_meta["request_type"] = verb
            status = response.status_code or 0
            content = response.content if status else b""
            if 200 <= status < 300 or status in accept:
                response.success()
            else:
                response.failure(failure_reason(status, content, getattr(response, "error", None)))
            return Reply(status, content or b"")

    def ensure_namespace(self, namespace: str) -> None:
        """Create the user's namespace unless it exists (every user tries; all but the first get 409)."""
        self.call("POST", "/api/v1/namespaces", "setup", accept=(409,),
                  body={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})

    def report(self, verb: str, resource: str, mode: str, seconds: float, length: int, error: str | None = None) -> None:
        """Report something that is not one request (all pages of a LIST, a watch's initial events)."""
        self.environment.events.request.fire(
            request_type=verb, name=str(naming.RequestName(verb, resource, mode)), response_time=seconds * 1000.0,
            response_length=length, exception=error, context={}, response=None, url=None, start_time=time.time())

    def stream_watch(self, path: str, mode: str, until_initial_end: bool,
                     drop_at_initial_end: bool = False) -> watching.WatchProgress:
        """Open a watch and read it to its end (the server's timeoutSeconds), or, with
        `drop_at_initial_end`, only to the initial-events-end bookmark (a streaming list).

        Reported once: for a watch-list, at the initial-events-end bookmark with the time and bytes it
        took; for a plain watch, when it closes, with its duration and bytes. A dropped stream was not
        read to its end: geventhttpclient closes that connection rather than reuse it.
        """
        name = naming.RequestName("WATCH", naming.resource_of(path), mode)
        progress = watching.WatchProgress()
        started = time.perf_counter()
        reported = False
        # Watch bodies are never compressed by the apiserver; identity keeps byte counts honest.
        with self.client.request("GET", path, name=str(name), stream=True, catch_response=True,
                                 headers={"Accept-Encoding": "identity"}) as response:
            response.request_meta["request_type"] = "WATCH"
            status = response.status_code or 0
            raw = getattr(response, "_response", None)
            if status != 200 or raw is None:
                body = raw.read() if raw is not None else b""
                response.failure(failure_reason(status, body, getattr(response, "error", None)))
                return progress
            try:
                for _ in range(10_000_000):  # bounded: ends at the server's timeoutSeconds
                    line = raw.readline(b"\n")
                    if not line:
                        break
                    progress.feed_line(line)
                    if until_initial_end and progress.initial_events_done and not reported:
                        reported = True
                        response.request_meta["response_time"] = (time.perf_counter() - started) * 1000.0
                        response.request_meta["response_length"] = progress.bytes_at_initial_end
                    if drop_at_initial_end and (progress.initial_events_done or progress.error):
                        break
            except (OSError, gevent.Timeout) as error:
                progress.error = progress.error or f"stream broken: {type(error).__name__}"
            if progress.error:
                response.failure(progress.error)
            elif until_initial_end and not progress.initial_events_done:
                response.failure("stream ended before the initial-events-end bookmark")
            else:
                if not until_initial_end:
                    response.request_meta["response_time"] = (time.perf_counter() - started) * 1000.0
                    response.request_meta["response_length"] = progress.bytes
                response.success()
        return progress
