"""The `kqbench` command: one verb per module, registered here."""

from __future__ import annotations

import importlib
import signal
import sys

import click

from harness.errors import KqbenchError


COMMANDS = {
    "toolchain": ("toolchain", "group"),
    "cluster": ("cluster", "group"),
    "run": ("run", "command"),
    "capacity": ("capacity", "command"),
    "report": ("report", "command"),
    "compare": ("compare", "command"),
    "baseline": ("baseline", "group"),
    "history": ("history", "command"),
    "load": ("load", "command"),
    "etcd": ("etcd", "group"),
    "scheduler": ("scheduler", "group"),
    "agree": ("agree", "command"),
    "replay": ("replay", "command"),
    "readme": ("readme", "command"),
    "results": ("results", "group"),
}
"""Each verb's module in harness.cli and the click object in it."""


class _Verbs(click.Group):
    """Imports a verb's module only when that verb runs: importing all of them (pandas, scipy, the drivers)
    took 2.2 s, which every `kqbench cluster up` paid before it started anything."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attribute = COMMANDS[name]
        return getattr(importlib.import_module(f"harness.cli.{module}"), attribute)


@click.group(cls=_Verbs, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    """kqbench: measure what Kubernetes queueing designs cost a real control plane."""


def main() -> None:
    """Console-script entry: known errors become one line on stderr and exit code 2."""
    unwind_on_sigterm()
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


def unwind_on_sigterm() -> None:
    """SIGTERM (CI time-outs, `kill`) unwinds like Ctrl-C, so that clusters are torn down."""
    signal.signal(signal.SIGTERM, _raise_interrupt)


def _raise_interrupt(signum, frame) -> None:
    # Only the first unwinds: a second SIGTERM (`timeout` forwarding one, `pkill` matching it too) would
    # otherwise interrupt the teardown the first started and leave a cluster running. SIGKILL still stops it.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt(f"signal {signum}")
