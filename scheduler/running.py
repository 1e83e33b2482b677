"""One scheduler process: controller + visibility API + /metrics on one asyncio loop."""

from __future__ import annotations

import asyncio
import logging
import signal

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from scheduler import parentwatching
from scheduler.controller import controlling, jobreconciling, metering, topologyungating
from scheduler.core.queues import QueueManager
from scheduler.publishing import metering as publish_metering, publishers, strategies
from scheduler.kube import client as kube, kubeconfig
from scheduler.settings import BIND, SchedulerSettings, named_for
from scheduler.visibility import authn, authz, pagecache, serving

log = logging.getLogger("kqbench.scheduler")
AUTHENTICATION_CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"


async def _metrics_app(metrics: metering.SchedulerMetrics, controller: controlling.Controller) -> web.Application:
    async def scrape(request: web.Request) -> web.Response:
        return web.Response(body=generate_latest(metrics.registry), headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(request: web.Request) -> web.Response:
        # Ready once the informers have listed everything: positions and admissions are then real.
        return web.Response(text="ok") if controller.ready else web.Response(status=503, text="syncing")

    app = web.Application()
    app.add_routes([web.get("/metrics", scrape), web.get("/healthz", healthz), web.get("/readyz", readyz)])
    return app


async def serve(settings: SchedulerSettings, stop: asyncio.Event) -> None:
    """Run until stop is set."""
    creds = kubeconfig.load(settings.kubeconfig)
    metrics = metering.SchedulerMetrics()
    writer = kube.KubeClient(creds, settings.qps, settings.burst, on_write=metrics.observe_write)
    reader = kube.KubeClient(creds, None, 1, user_agent="kqbench-scheduler-reader")
    runners: list[web.AppRunner] = []
    try:
        strategy = strategies.get(settings.strategy)
        manager = QueueManager(**named_for(QueueManager, settings, positions=strategy.core_positions,
                                           fair_sharing=settings.core_fair_sharing(),
                                           admission_fair_sharing=settings.core_admission_fair_sharing()))
        publisher = publishers.create(strategy.name, manager.pending_lists, writer,
                                      publish_metering.PublishMetrics(strategy.name, metrics.registry), settings.publish)
        pods_ready = settings.core_wait_for_pods_ready()
        controller = controlling.Controller(writer, manager, metrics, on_change=publisher.notify,
                                            settings=controlling.ControllerSettings(
                                                **named_for(controlling.ControllerSettings, settings)),
                                            pods_ready=pods_ready)
        if settings.metrics_port:
            runner = web.AppRunner(await _metrics_app(metrics, controller), access_log=None)
            await runner.setup()
            await web.TCPSite(runner, BIND, settings.metrics_port).start()
            runners.append(runner)
        if settings.visibility_port and strategy.visibility_api:
            configmap = await reader.get(AUTHENTICATION_CONFIGMAP)
            request_header = authn.RequestHeaderConfig.from_configmap(configmap.get("data") or {})
            authorizer = authz.DelegatingAuthorizer(reader) if settings.authorization == "delegate" else authz.AllowAll()
            pages = pagecache.PageCache() if settings.page_cache else pagecache.NoPageCache()
            server = serving.VisibilityServer(manager.pending_lists, request_header, authorizer, metrics, page_cache=pages,
                                              estimates=controller.estimates)
            runner = web.AppRunner(server.app(), access_log=None)
            await runner.setup()
            context = serving.server_ssl_context(serving.TLSFiles(settings.tls_cert, settings.tls_key), request_header)
            await web.TCPSite(runner, BIND, settings.visibility_port, ssl_context=context).start()
            runners.append(runner)
        background = [asyncio.create_task(publisher.run(stop))]
        if settings.manage_jobs:
            jobs = jobreconciling.JobReconciler(writer, lambda: manager.cache.flavors, metrics,
                                                wait_for_pods_ready=pods_ready.enable)
            ungater = topologyungating.TopologyUngater(writer, metrics)

            def observe(kind: str, obj: dict, workload) -> None:
                jobs.observe_workload(kind, obj, workload)
                ungater.observe_workload(kind, obj, workload)
            controller.workload_observer = observe
            background.append(asyncio.create_task(jobs.run(stop, controller.synced)))
            background.append(asyncio.create_task(ungater.run(stop)))
        log.info("scheduler running: strategy=%s qps=%s jobs=%s waitForPodsReady=%s estimator=%s", strategy.name,
                 settings.qps, settings.manage_jobs, pods_ready.enable, settings.estimator)
        try:
            await controller.run(stop)
        finally:
            stop.set()
            await asyncio.gather(*background, return_exceptions=True)
    finally:
        for runner in runners:
            await runner.cleanup()
        await writer.close()
        await reader.close()


def run(settings: SchedulerSettings) -> None:
    """Blocking entry: SIGTERM/SIGINT stop the loop cleanly, and so does the starter's death."""
    parentwatching.watch(settings.parent_pid)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await serve(settings, stop)

    asyncio.run(main())
