"""One container or network of the engine as the harness makes them: created with the harness's
limits, read (its logs, why it stopped) and removed. A service (docker_service.py), its warm
pool and its database sidecar all go through these, so every container gets the same limits."""

from __future__ import annotations

import contextlib
from functools import partial
from typing import Any

from docker.errors import NotFound
from docker.types import LogConfig

from .engine import engine_call

LOG_CONFIG = {"type": "json-file", "config": {"max-size": "10m", "max-file": "1"}}


def create_limited(
    client: Any, image: str, *, name: str, network: str, env: dict[str, str], aliases: list[str], labels: dict[str, str],
    memory: str, cpus: float, pids: int, extra: dict[str, Any] | None = None,
) -> Any:
    """A created (not started) container on ``network``: no capabilities, no new privileges, no swap, bounded logs."""
    kwargs: dict[str, Any] = {
        "name": name,
        "detach": True,
        "environment": env,
        "labels": labels,
        "network": network,
        "networking_config": {network: client.api.create_endpoint_config(aliases=aliases)},
        "mem_limit": memory,
        # Equal to mem_limit: no swap, so a memory hog meets the OOM killer instead of thrashing.
        "memswap_limit": memory,
        "nano_cpus": int(cpus * 1e9),
        "pids_limit": pids,
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "privileged": False,
        "log_config": LogConfig(**LOG_CONFIG),
    }
    kwargs.update(extra or {})
    return engine_call(lambda: client.containers.create(image, **kwargs), f"creating container {name}")


def internal_network(client: Any, name: str, labels: dict[str, str]) -> Any:
    """A bridge network without egress: what a candidate and its mocks live on."""
    return engine_call(lambda: client.networks.create(name, driver="bridge", internal=True, labels=labels), f"creating network {name}")


def remove_container(container: Any) -> None:
    """Remove a container and its anonymous volumes, running or not; one already gone is fine."""
    with contextlib.suppress(NotFound):
        engine_call(partial(container.remove, force=True, v=True), f"removing container {container.name}")


def remove_network(network: Any) -> None:
    """Remove a network; one already gone is fine."""
    with contextlib.suppress(NotFound):
        engine_call(network.remove, f"removing network {network.name}")


def container_logs(container: Any, tail: int | None) -> str:
    """A container's stdout and stderr (the last ``tail`` lines when given)."""
    try:
        data = engine_call(lambda: container.logs(stdout=True, stderr=True, tail=tail if tail else "all"), f"reading logs of {container.name}")
    except NotFound:
        return ""
    return bytes(data).decode("utf-8", errors="replace")


def exit_reason_of(container: Any, memory_limit: str) -> str | None:
    """Why a container stopped, or None while it runs."""
    if container is None:
        return "not started"
    try:
        engine_call(container.reload, f"inspecting {container.name}")
    except NotFound:
        return "the container was removed"
    state = container.attrs.get("State") or {}
    if state.get("Running") or state.get("Restarting") or state.get("Status") == "created":
        return None
    if state.get("OOMKilled"):
        return f"killed by the OOM killer (memory limit {memory_limit})" if memory_limit else "killed by the OOM killer"
    code = state.get("ExitCode")
    detail = f": {state['Error']}" if state.get("Error") else ""
    if code == 137:
        return f"killed by SIGKILL (exit code 137){detail}"
    return f"exited with code {code}{detail}"


def tail_lines(text: str, tail: int | None) -> str:
    """The last ``tail`` lines of ``text`` (all of it when ``tail`` is falsy)."""
    if not tail:
        return text
    return "".join(text.splitlines(keepends=True)[-tail:])
