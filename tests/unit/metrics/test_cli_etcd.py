"""`kqbench etcd census` argument parsing (the command itself runs in the integration test)."""

from __future__ import annotations

import click
import pytest

from harness.cli import etcd


@pytest.mark.parametrize("text, size", [
    ("1048576", 1048576), ("1Mi", 1048576), ("1.5Mi", 1572864), ("800Ki", 819200), ("2k", 2000), ("2M", 2_000_000),
    (" 10 ", 10),
])
def test_parse_bytes(text, size):
    assert etcd.parse_bytes(text) == size


@pytest.mark.parametrize("text", ["", "1X", "Mi", "-5", "1..5Mi", "1.5MiB", "10 b",
                                  "1m"])  # Kubernetes' `m` is a thousandth, not a megabyte
def test_parse_bytes_rejects(text):
    with pytest.raises(click.BadParameter):
        etcd.parse_bytes(text)
