"""The visibility HTTPS server: Kueue's pendingworkloads endpoints over the core's positions."""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from dataclasses import dataclass

import orjson
import aiohttp
from aiohttp import web

from scheduler.controller import estimating, metering
from scheduler.core import positions
from scheduler.core.pendingreading import PendingReader
from scheduler.kube import client as kube
from scheduler.visibility import authn, authz, documents, estimatefields, pagecache

PREFIX = f"/apis/{documents.GROUP}"
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TLSFiles:
    cert: str
    key: str


def server_ssl_context(tls: TLSFiles, request_header: authn.RequestHeaderConfig) -> ssl.SSLContext:
    """Serve with our certificate; ask for (not require) a client certificate from the front-proxy CA.

    Without one the TLS handshake still succeeds and the request gets a 401 Status, which is what
    a client deserves to read; with one from another CA the handshake itself fails.
    """
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tls.cert, tls.key)
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(cadata=request_header.client_ca_pem)
    return context


def _json(body: dict, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


class VisibilityServer:
    def __init__(self, pending: PendingReader, request_header: authn.RequestHeaderConfig, authorizer,
                 metrics: metering.SchedulerMetrics, clock=time.perf_counter,
                 page_cache: pagecache.PageCache | None = None,
                 estimates: estimating.EstimateRefresher | None = None) -> None:
        self.pending = pending
        self.estimates = estimates
        """Adds its current board's estimates to every entry (scheduler.visibility.estimatefields); None: none."""
        self.page_cache = page_cache if page_cache is not None else pagecache.PageCache()
        self.request_header = request_header
        self.authorizer = authorizer
        self.metrics = metrics
        self.clock = clock

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._statuses, self._authenticate])
        routes = [
            web.get("/apis", self.group_list),
            web.get(PREFIX, self.group),
            web.get(PREFIX + "/{version}", self.resources),
            web.get(PREFIX + "/{version}/clusterqueues/{name}", self.cluster_queue),
            web.get(PREFIX + "/{version}/clusterqueues/{name}/pendingworkloads", self.cluster_queue_pending),
            web.get(PREFIX + "/{version}/namespaces/{namespace}/localqueues/{name}", self.local_queue),
            web.get(PREFIX + "/{version}/namespaces/{namespace}/localqueues/{name}/pendingworkloads",
                    self.local_queue_pending),
            web.get("/healthz", self.healthz),
            web.get("/readyz", self.healthz),
            web.get("/livez", self.healthz),
        ]
        app.add_routes(routes)
        return app

    @web.middleware
    async def _statuses(self, request: web.Request, handler):
        """Every error is a metav1.Status, as kube-apiserver answers (aiohttp's own are plain text)."""
        try:
            return await handler(request)
        except web.HTTPException as error:
            if error.status < 400 or error.content_type == "application/json":
                raise
            headers = {k: v for k, v in error.headers.items() if k.lower() in ("allow", "retry-after")}
            message = {404: "the server could not find the requested resource",
                       405: f"the server does not allow this method on the requested resource ({request.method})"}
            body = documents.status(error.status, message.get(error.status, error.reason))
            return web.Response(body=orjson.dumps(body), status=error.status, content_type="application/json",
                                headers=headers)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception:  # a bug: logged, answered as kube-apiserver answers one
            log.exception("visibility request %s %s failed", request.method, request.path[:200])
            return _json(documents.status(500, "Internal error occurred: the visibility server failed on this request"), 500)

    @web.middleware
    async def _authenticate(self, request: web.Request, handler):
        if request.path in ("/healthz", "/readyz", "/livez"):
            return await handler(request)
        peercert = request.transport.get_extra_info("peercert") if request.transport else None
        try:
            request["user"] = authn.authenticate(self.request_header, peercert, request.headers)
        except authn.Unauthenticated as error:
            return _json(documents.status(401, f"Unauthorized: {error}"), 401)
        return await handler(request)

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def group_list(self, request: web.Request) -> web.Response:
        return _json(documents.api_group_list())

    async def group(self, request: web.Request) -> web.Response:
        return _json(documents.api_group())

    def _version(self, request: web.Request) -> str:
        version = request.match_info["version"]
        if version not in documents.VERSIONS:
            raise web.HTTPNotFound(body=orjson.dumps(documents.status(404, f"version {version} is not served")),
                                   content_type="application/json")
        return version

    async def resources(self, request: web.Request) -> web.Response:
        return _json(documents.api_resource_list(self._version(request)))

    async def _authorize(self, request: web.Request, attributes: authz.Attributes) -> web.Response | None:
        try:
            allowed = await self.authorizer.allowed(request["user"], attributes)
        except (OSError, asyncio.TimeoutError, aiohttp.ClientError, kube.ApiError) as error:  # apiserver away: ask later
            log.warning("authorization review failed: %s", error)
            return web.Response(body=orjson.dumps(documents.status(503, "authorization is unavailable, try again")),
                                status=503, content_type="application/json", headers={"Retry-After": "1"})
        if allowed:
            return None
        what = f"{attributes.resource}/{attributes.subresource}" if attributes.subresource else attributes.resource
        where = f" in namespace {attributes.namespace}" if attributes.namespace else ""
        message = (f'{what}.{documents.GROUP} "{attributes.name}" is forbidden: User "{request["user"].name}" '
                   f"cannot get resource{where}")
        return _json(documents.status(403, message), 403)

    async def cluster_queue(self, request: web.Request) -> web.Response:
        version, name = self._version(request), request.match_info["name"]
        denied = await self._authorize(request, authz.Attributes("clusterqueues", name, subresource=""))
        if denied:
            return denied
        if name not in self.pending.cluster_queue_names():
            return _json(documents.status(404, f'clusterqueues.{documents.GROUP} "{name}" not found'), 404)
        return _json(documents.queue_object(version, "ClusterQueue", name))

    async def local_queue(self, request: web.Request) -> web.Response:
        version, name, namespace = self._version(request), request.match_info["name"], request.match_info["namespace"]
        denied = await self._authorize(request, authz.Attributes("localqueues", name, namespace, subresource=""))
        if denied:
            return denied
        if not self.pending.has_local_queue(namespace, name):
            return _json(documents.status(404, f'localqueues.{documents.GROUP} "{name}" not found'), 404)
        return _json(documents.queue_object(version, "LocalQueue", name, namespace))

    async def _pending(self, request: web.Request, endpoint: str, attributes: authz.Attributes, page,
                       generation) -> web.Response:
        """Authorize, then answer from the page cache or encode the page (and keep it)."""
        started = self.clock()
        version = self._version(request)
        denied = await self._authorize(request, attributes)
        if denied:
            response = denied
        else:
            query = request.query
            offset, limit = query.get("offset"), query.get("limit")
            board = self.estimates.board if self.estimates is not None else None
            try:
                key = (endpoint, version, attributes.namespace, attributes.name, offset, limit, generation(),
                       board.generation if board is not None else 0)
                body = self.page_cache.get(key)
                self.metrics.visibility_pages.labels(endpoint, "hit" if body is not None else "miss").inc()
                if body is None:
                    items = page(offset, limit)
                    body = orjson.dumps(documents.pending_workloads_summary(version, estimatefields.entries(items, board)))
                    self.page_cache.put(key, body)
                response = web.Response(body=body, content_type="application/json")
            except positions.InvalidPageError as error:
                response = _json(documents.status(400, str(error)), 400)
            except positions.QueueNotFoundError as error:
                response = _json(documents.status(404, str(error)), 404)
        self.metrics.visibility_latency.labels(endpoint, str(response.status)).observe(self.clock() - started)
        return response

    async def cluster_queue_pending(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        return await self._pending(
            request, "clusterqueue", authz.Attributes("clusterqueues", name),
            lambda offset, limit: self.pending.summary_for_cluster_queue(name, offset or 0, limit or 1000),
            lambda: self.pending.generation(name))

    async def local_queue_pending(self, request: web.Request) -> web.Response:
        name, namespace = request.match_info["name"], request.match_info["namespace"]
        return await self._pending(
            request, "localqueue", authz.Attributes("localqueues", name, namespace),
            lambda offset, limit: self.pending.summary_for_local_queue(namespace, name, offset or 0, limit or 1000),
            lambda: self.pending.local_queue_generation(namespace, name))
