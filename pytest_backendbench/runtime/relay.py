"""Reaching services on an engine whose container IPs the harness cannot route to.

On a local rootful Docker engine the harness talks to a container by its IP on the task's
``--internal`` network. That address is unreachable when the engine is rootless Podman (the
network lives in the user's namespace), Docker Desktop (a VM), or remote (``DOCKER_HOST``
tcp:// or ssh://). Publishing the candidate's port would need a non-internal network and so
give the candidate egress. Instead a small relay container joins the task's internal network
and a relay network of its own, and publishes one port per target (the service, each mock,
the PostgreSQL sidecar); the candidate stays on the internal network with no way out.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from urllib.parse import urlparse

FIRST_RELAY_PORT = 10001
RELAY_MEMORY_LIMIT = "64m"

# The relay itself: stdlib asyncio, started with `python -c` in the base image, one listener
# per "listen=host:port" pair of RELAY_TARGETS; each accepted connection is piped both ways.
RELAY_SCRIPT = r"""
import asyncio, os

async def pipe(reader, writer):
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        try:
            writer.close()
        except OSError:
            pass

def handler(host, port):
    async def handle(client_reader, client_writer):
        try:
            # Happy eyeballs: a name that still lists a removed container's address as well
            # reaches the live one instead of waiting out the dead one's connect timeout.
            upstream_reader, upstream_writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, happy_eyeballs_delay=0.25), 10)
        except (OSError, asyncio.TimeoutError):
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, upstream_writer), pipe(upstream_reader, client_writer))
    return handle

async def main():
    servers = []
    for pair in os.environ["RELAY_TARGETS"].split(","):
        listen, target = pair.split("=")
        host, port = target.rsplit(":", 1)
        servers.append(await asyncio.start_server(handler(host, int(port)), "0.0.0.0", int(listen)))
    print("relay ready", flush=True)
    await asyncio.gather(*(s.serve_forever() for s in servers))

asyncio.run(main())
"""


@dataclass(frozen=True)
class RelayTarget:
    """One service the harness must reach: its alias on the task network and its port."""

    alias: str
    port: int
    listen: int

    @property
    def spec(self) -> str:
        """``listen=alias:port``, as RELAY_TARGETS lists it."""
        return f"{self.listen}={self.alias}:{self.port}"


def relay_targets(pairs: list[tuple[str, int]]) -> list[RelayTarget]:
    """Targets with relay-side listening ports assigned in order."""
    return [RelayTarget(alias, port, FIRST_RELAY_PORT + n) for n, (alias, port) in enumerate(pairs)]


def engine_is_remote(docker_host: str | None = None) -> bool:
    """Whether DOCKER_HOST names an engine on another machine (tcp:// or ssh://)."""
    host = os.environ.get("DOCKER_HOST", "") if docker_host is None else docker_host
    return urlparse(host).scheme in {"tcp", "ssh", "http", "https"}


def relay_host(docker_host: str | None = None) -> str:
    """The address at which relay ports are reached: the engine's host, or loopback."""
    host = os.environ.get("DOCKER_HOST", "") if docker_host is None else docker_host
    if engine_is_remote(host):
        return urlparse(host).hostname or "127.0.0.1"
    return "127.0.0.1"


def relay_bind(configured: str | None = None, docker_host: str | None = None) -> str:
    """Where relay ports are published on the engine's host.

    Loopback for a local engine. A remote engine's loopback is not ours, so the default
    there is every interface of the engine host: only the relay's ports are exposed (the
    candidate stays on its internal network), which is the trade-off docs/scale-out.md
    states; set BACKENDBENCH_RELAY_BIND to a private interface's address to narrow it.
    """
    if configured and configured.strip():
        return configured.strip()
    return "0.0.0.0" if engine_is_remote(docker_host) else "127.0.0.1"


def relay_wanted(engine_name: str, forced: bool | None = None) -> bool:
    """Whether to reach services through a relay, from the settings and the engine.

    BACKENDBENCH_DOCKER_RELAY (or the older BACKENDBENCH_DOCKER_PUBLISH), given as ``forced``,
    turns it on or off; otherwise a relay is used for Podman, remote engines and non-Linux hosts.
    """
    if forced is not None:
        return forced
    return sys.platform != "linux" or engine_is_remote() or "podman" in engine_name.lower()
