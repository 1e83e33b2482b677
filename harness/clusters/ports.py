"""Loopback ports for the control plane: refuse busy ones (free ones are picked by scheduler.listening)."""

from __future__ import annotations

from harness.errors import KqbenchError
from scheduler import listening


class PortInUseError(KqbenchError):
    pass


def require_free(port: int, what: str) -> int:
    if not listening.is_free(port):
        raise PortInUseError(
            f"port {port} on {listening.LOOPBACK} ({what}) is in use: choose another with --port or stop what holds it"
        )
    return port
