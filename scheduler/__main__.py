"""`python -m scheduler`: the reference scheduler as a process of its own (the harness starts it so)."""

from __future__ import annotations

import logging
import sys

import click

from scheduler import running
from scheduler.controller import controlling
from scheduler.kube import kubeconfig as kubeconfig_reader
from scheduler.publishing import strategies


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--kubeconfig", required=True, help="Kubeconfig of the cluster to schedule on.")
@click.option("--strategy", default=strategies.AGGREGATED_INDEXED, show_default=True,
              type=click.Choice(list(strategies.STRATEGIES)), help="How users learn their queue position.")
@click.option("--topn", type=int, default=10, show_default=True, help="cq-status-topn: head size (1-4000).")
@click.option("--topn-interval", type=float, default=5.0, show_default=True, help="cq-status-topn: refresh seconds.")
@click.option("--single-object-interval", type=float, default=1.0, show_default=True,
              help="single-object: rewrite at most every this many seconds.")
@click.option("--qps", type=float, default=50.0, show_default=True, help="Client write QPS (Kueue's default).")
@click.option("--burst", type=int, default=100, show_default=True)
@click.option("--no-client-limit", is_flag=True, help="No client-side QPS limit on writes.")
@click.option("--visibility-port", type=int, default=0, help="HTTPS port of the visibility API on 127.0.0.1 (0: off).")
@click.option("--metrics-port", type=int, default=0, help="HTTP port of /metrics on 127.0.0.1 (0: off).")
@click.option("--tls-cert", default="", help="Serving certificate of the visibility API.")
@click.option("--tls-key", default="")
@click.option("--authorization", default="delegate", show_default=True, help="delegate (SubjectAccessReview) | off")
@click.option("--max-unwritten", type=int, default=controlling.DEFAULT_MAX_UNWRITTEN, show_default=True,
              help="Admissions decided ahead of their status writes before the cycle loop waits.")
def main(kubeconfig, strategy, topn, topn_interval, single_object_interval, qps, burst, no_client_limit, visibility_port, metrics_port, tls_cert, tls_key,
         authorization, max_unwritten) -> None:
    """Run the reference scheduler: controller, visibility API and /metrics."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = running.SchedulerSettings(
            kubeconfig=kubeconfig, strategy=strategy,
            publish=strategies.PublishSettings(topn=topn, topn_interval_seconds=topn_interval,
                                               single_object_interval_seconds=single_object_interval), qps=None if no_client_limit else qps, burst=burst,
            visibility_port=visibility_port, metrics_port=metrics_port, tls_cert=tls_cert, tls_key=tls_key,
            authorization=authorization, max_unwritten=max_unwritten)
    except ValueError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)
    try:
        running.run(settings)
    except kubeconfig_reader.KubeconfigError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)


main()
