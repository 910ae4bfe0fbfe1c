"""--bench-remote-hosts: what the browser does with hosts that are neither the candidate's nor a CDN's.

``live`` (the default) leaves them to the network. ``off`` sends every request for them to a
proxy port on which nothing listens, so it fails at once, as it would on a machine without
internet: in milliseconds and every time. Without internet the outcome is the same but its
timing is not: Chromium's DNS lookups of remote names wait 1-5 s when several browsers ask at
once (a resolver that drops queries arriving together, as this sandbox's does), so whether a
page's fallback for a failed API call shows before the step looks depended on how busy the
machine was. Loopback, private networks (where containers and relays live), names without a
dot, a remote engine's host and the CDN hosts bypass the proxy and behave as before.
"""

from __future__ import annotations

import socket

from ...errors import HarnessError
from ...runtime.relay import engine_is_remote, relay_host
from ..cdn.urls import CDN_HOSTS
from .options import REMOTE_HOST_MODES

LOCAL_NETWORKS = (
    "<local>",  # names without a dot: compose aliases, a remote engine called by its short name
    "localhost",
    "*.localhost",
    "0.0.0.0",
    "127.0.0.0/8",
    "10.0.0.0/8",
    "172.16.0.0/12",
    "192.168.0.0/16",
    "169.254.0.0/16",
    "[::1]",
    "fc00::/7",  # CIDR blocks take the address without brackets
    "fe80::/10",
)
"""Where candidates are served (process runtime, container IPs, relays): never sent to the refusing proxy."""


class RefusingPort:
    """A loopback port that is bound but never listens: every connection to it is refused at once.

    Bound for as long as the browsers that use it run, so no other program can take the port
    and answer in its place.
    """

    def __init__(self) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    def close(self) -> None:
        """Give the port back."""
        self._socket.close()


def bypass_hosts(docker_host: str | None = None) -> list[str]:
    """The hosts that keep their usual route with ``off``: local networks, a remote engine, the CDN hosts."""
    hosts = list(LOCAL_NETWORKS)
    if engine_is_remote(docker_host):
        hosts.append(relay_host(docker_host))
    hosts += CDN_HOSTS
    return hosts


def remote_host_flags(mode: str, refusing: RefusingPort | None, docker_host: str | None = None) -> list[str]:
    """Chromium flags for a --bench-remote-hosts mode (``live``: none)."""
    if mode not in REMOTE_HOST_MODES:
        raise HarnessError(f"--bench-remote-hosts={mode!r}: expected one of {', '.join(REMOTE_HOST_MODES)}")
    if mode == "live":
        return []
    if refusing is None:
        raise HarnessError("--bench-remote-hosts=off needs the refusing port")
    return [f"--proxy-server=http://127.0.0.1:{refusing.port}", "--proxy-bypass-list=" + ";".join(bypass_hosts(docker_host))]
