"""Where kqbench's own processes listen: the loopback address, and free ports on it.

Defined here, the lowest package every other imports (the harness and the load generator both import
the scheduler, and neither may be imported by it), so that the address and the way a free port is
picked are written once for the scheduler, the load generator and the harness's control plane.
"""

from __future__ import annotations

import socket
from contextlib import ExitStack

LOOPBACK = "127.0.0.1"
"""Every server kqbench starts (the scheduler's, Kueue's, the control plane's, Locust's) binds here only."""


def is_free(port: int, host: str = LOOPBACK) -> bool:
    """True when nothing listens on host:port and we could bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def pick_free(count: int, host: str = LOOPBACK) -> list[int]:
    """count distinct free ports (held open together so the kernel hands out different ones)."""
    with ExitStack() as stack:
        ports = []
        for _ in range(count):
            sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sock.bind((host, 0))
            ports.append(sock.getsockname()[1])
        return ports
