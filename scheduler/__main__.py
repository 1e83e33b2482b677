"""`python -m scheduler --settings JSON`: the reference scheduler as a process of its own.

Its one starter is harness.implementations.reference (by hand: `kqbench scheduler run`), which
writes every setting as one record (scheduler.settings.to_record).
"""

from __future__ import annotations

import logging
import sys

import click

from scheduler import running, settings as scheduler_settings
from scheduler.kube import kubeconfig as kubeconfig_reader


def _run(settings: scheduler_settings.SchedulerSettings) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        running.run(settings)
    except kubeconfig_reader.KubeconfigError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)


scheduler_settings.command(_run)(prog_name="python -m scheduler")
