"""`kqbench etcd census`: what etcd stores, per resource, and which objects near its size limit."""

from __future__ import annotations

import dataclasses
import json

import click

from harness.clusters import state
from harness.errors import KqbenchError
from harness.metrics import census as censuses, etcdreading
from scheduler.core import quantities

def parse_bytes(text: str) -> int:
    """A Kubernetes quantity of bytes ('1048576', '1Mi', '800Ki', '1.5Mi', '2k') -> bytes.

    Kubernetes' own grammar (scheduler.core.quantities), so `1m` is a thousandth, not a megabyte:
    a size that is not a whole number of bytes is refused rather than rounded.
    """
    try:
        milli = quantities.parse_quantity(text.strip())
    except quantities.QuantityError:
        raise click.BadParameter(f"{text!r} is not a size: use bytes or a Kubernetes quantity such as 1Mi, "
                                 "800Ki, 1.5Mi, 2M") from None
    if milli < 0 or milli % quantities.MILLI_PER_UNIT:
        raise click.BadParameter(f"{text!r} is not a whole number of bytes (in Kubernetes quantities `m` is "
                                 "a thousandth: use M or Mi for megabytes)")
    return milli // quantities.MILLI_PER_UNIT


def _human(size: int) -> str:
    for unit, factor in (("MiB", 1024**2), ("KiB", 1024)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} B"


@click.group("etcd")
def group() -> None:
    """Look inside the etcd of a kqbench cluster."""


@group.command("census")
@click.option("--name", default="kqbench", show_default=True, help="Cluster started by `kqbench cluster up`.")
@click.option("--etcd-url", default=None, help="etcd client URL (default: the one the cluster recorded).")
@click.option("--threshold", default="1Mi", show_default=True,
              help="Flag objects at least this large (bytes, or a Kubernetes quantity: 800Ki, 1Mi, 1.5Mi).")
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True, help="Largest keys to list.")
@click.option("--prefix", default=censuses.REGISTRY_PREFIX, show_default=True, help="Key prefix to read.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
def census(name, etcd_url, threshold, top, prefix, as_json) -> None:
    """Objects and stored sizes per resource, the largest keys, objects near etcd's limit.

    Per resource: count, total, p50, p99 and max of value sizes, read at one etcd revision.
    Objects of at least THRESHOLD are flagged, with how close they are to etcd's 1.5 MiB
    request limit (--max-request-bytes default), past which a write of them fails."""
    threshold_bytes = parse_bytes(threshold)
    url = etcd_url or state.load(name).etcd_url
    if not url:
        raise KqbenchError(f"cluster {name!r} has no etcd kqbench can reach (kind/existing backends): pass --etcd-url")
    snapshot = etcdreading.Snapshot()
    result = censuses.summarise(etcdreading.read_sizes(url, prefix, snapshot=snapshot),
                                threshold_bytes=threshold_bytes, top=top, prefix=prefix)
    result = dataclasses.replace(result, revision=snapshot.revision)  # known once every page was read
    if as_json:
        click.echo(json.dumps(to_json(result, url), indent=2))
    else:
        _print(result, url)


def to_json(result: censuses.Census, url: str) -> dict:
    return {
        "etcd": url, "revision": result.revision, "objects": result.objects, "total_bytes": result.total_bytes,
        "threshold_bytes": result.threshold_bytes, "limit_bytes": result.limit_bytes,
        "resources": [{"resource": r.resource, "count": r.count, "total_bytes": r.total_bytes, "p50_bytes": r.p50_bytes,
                       "p99_bytes": r.p99_bytes, "max_bytes": r.max_bytes, "largest_key": r.largest_key}
                      for r in result.resources],
        "largest": [{"key": k, "bytes": b} for k, b in result.largest],
        "flagged": [{"key": k, "bytes": b, "over_limit": b >= result.limit_bytes} for k, b in result.flagged],
    }


def _print(result: censuses.Census, url: str) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"etcd {url} at revision {result.revision}: {result.objects} objects, {_human(result.total_bytes)}",
                  caption="sizes are values as stored (protobuf for built-in types, JSON for CRDs)")
    for column in ("resource", "count", "total", "p50", "p99", "max"):
        table.add_column(column, justify="left" if column == "resource" else "right", overflow="fold")
    for r in result.resources:
        table.add_row(r.resource, f"{r.count:,}", _human(r.total_bytes), _human(r.p50_bytes),
                      _human(r.p99_bytes), _human(r.max_bytes))
    console.print(table)
    if result.largest:
        largest = Table(title=f"largest {len(result.largest)} keys")
        largest.add_column("key", overflow="fold")
        largest.add_column("size", justify="right")
        for key, size in result.largest:
            largest.add_row(key, _human(size))
        console.print(largest)
    limit = _human(result.limit_bytes)
    if not result.flagged:
        console.print(f"no object at or over {_human(result.threshold_bytes)} (etcd request limit {limit})")
    for key, size in result.flagged:
        verdict = (f"OVER etcd's {limit} request limit: the next write of it fails" if size >= result.limit_bytes
                   else f"{size / result.limit_bytes:.0%} of etcd's {limit} request limit")
        console.print(f"[bold red]flagged[/] {key}: {_human(size)}, {verdict}")
