"""The `kqbench` command: one verb per module, registered here."""

from __future__ import annotations

import signal
import sys

import click

from harness.cli import agree, baseline, capacity, cluster, compare, etcd, history, load, replay, report, run, scheduler, toolchain
from harness.errors import KqbenchError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """kqbench: measure what Kubernetes queueing designs cost a real control plane."""


cli.add_command(toolchain.group)
cli.add_command(cluster.group)
cli.add_command(run.command)
cli.add_command(capacity.command)
cli.add_command(report.command)
cli.add_command(compare.command)
cli.add_command(baseline.group)
cli.add_command(history.command)
cli.add_command(load.command)
cli.add_command(etcd.group)
cli.add_command(scheduler.group)
cli.add_command(agree.command)
cli.add_command(replay.command)


def main() -> None:
    """Console-script entry: known errors become one line on stderr and exit code 2."""
    # SIGTERM (CI time-outs, `kill`) must unwind like Ctrl-C so that clusters are torn down.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        cli.main(standalone_mode=False)
    except (click.exceptions.Abort, KeyboardInterrupt):
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.UsageError as error:
        command = error.ctx.command_path if error.ctx else "kqbench"
        click.echo(f"error: {error.format_message()} (see `{command} --help`)", err=True)
        sys.exit(2)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except KqbenchError as error:
        click.echo(f"error: {error}", err=True)
        sys.exit(2)


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")
