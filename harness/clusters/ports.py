"""Loopback ports for the control plane: pick free ones, refuse busy ones."""

from __future__ import annotations

import socket
from contextlib import ExitStack

from harness.errors import KqbenchError

LOOPBACK = "127.0.0.1"


class PortInUseError(KqbenchError):
    pass


def is_free(port: int, host: str = LOOPBACK) -> bool:
    """True when nothing listens on host:port and we could bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def require_free(port: int, what: str) -> int:
    if not is_free(port):
        raise PortInUseError(
            f"port {port} on {LOOPBACK} ({what}) is in use: choose another with --port or stop what holds it"
        )
    return port


def pick_free(count: int, host: str = LOOPBACK) -> list[int]:
    """count distinct free ports (held open together so the kernel hands out different ones)."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
        return ports
