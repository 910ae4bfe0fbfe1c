"""The connection to a container engine (Docker, rootless Podman's compatible API, remote engines).

One place knows how the harness talks to an engine: how a client is made from ``DOCKER_*``,
how an engine call's failure becomes a ``HarnessError`` (never the candidate's fault), and
how names are made safe for images, containers and networks.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import docker
import requests
from docker.errors import DockerException, NotFound

from ..errors import HarnessError

NO_ENGINE_HINT = "start dockerd or use --bench-runtime=process"


class EngineAPIClient(docker.APIClient):  # type: ignore[misc]
    """An APIClient that talks to the engine with exactly the TLS settings DOCKER_* gave it.

    requests lets REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE and proxy variables override a session's
    own ``verify``, so a machine with a system CA bundle configured could not verify a TLS
    engine's private CA (DOCKER_CERT_PATH/ca.pem). The engine connection ignores them.
    """

    def merge_environment_settings(self, url: Any, proxies: Any, stream: Any, verify: Any, cert: Any) -> Any:
        self.trust_env = False
        return super().merge_environment_settings(url, proxies, stream, verify, cert)


class EngineClient(docker.DockerClient):  # type: ignore[misc]
    """``docker.DockerClient`` over an ``EngineAPIClient``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.api = EngineAPIClient(*args, **kwargs)


def docker_available() -> str | None:
    """None when a docker engine answers, else why not (for ``--bench-runtime=auto`` and skips)."""
    try:
        client = docker.from_env(timeout=5)
        try:
            client.ping()
        finally:
            client.close()
    except (DockerException, requests.RequestException) as err:
        return f"no docker engine answers ({one_line(err)}); {NO_ENGINE_HINT}"
    return None


def engine_call(call: Callable[[], Any], what: str) -> Any:
    """Run one engine call; engine trouble becomes ``HarnessError`` (``NotFound`` passes through)."""
    try:
        return call()
    except NotFound:
        raise
    except (DockerException, requests.RequestException) as err:
        raise HarnessError(f"the docker engine failed {what}: {one_line(err)}") from err


def docker_name(text: str) -> str:
    """Lower-case text made safe for image repositories, container and network names."""
    cleaned = re.sub(r"[^a-z0-9_.-]+", "-", text.lower()).strip("-._")
    return cleaned or "x"


def url_host(host: str) -> str:
    """A host as it goes into a URL (IPv6 literals bracketed)."""
    return f"[{host}]" if ":" in host else host


def one_line(err: BaseException) -> str:
    """An engine error as one short line (the engine's own explanation when it gave one)."""
    explanation = getattr(err, "explanation", None)
    text = str(explanation or err).strip()
    return " ".join(text.split())[:500]
