"""Runtimes: how candidates are built and started (see ``base.Runtime``)."""

from __future__ import annotations

from .base import Runtime, RuntimeOptions

RUNTIME_CHOICES = ("auto", "docker", "process")


def docker_unavailable_reason() -> str | None:
    """None when a Docker daemon answers, else why not (for ``--bench-runtime=auto``)."""
    try:
        from .docker import docker_available
    except ImportError as err:  # the docker runtime module or SDK is not installed
        return f"docker runtime unavailable: {err}"
    return docker_available()


def resolve_runtime_name(requested: str) -> tuple[str, str]:
    """The runtime ``auto`` stands for, and a line saying why (for the report header)."""
    if requested != "auto":
        return requested, f"runtime: {requested} (requested)"
    reason = docker_unavailable_reason()
    if reason is None:
        return "docker", "runtime: docker (auto: a Docker daemon answers)"
    return "process", f"runtime: process (auto: {reason}; the process runtime is for trusted code only)"


def create_runtime(name: str, options: RuntimeOptions) -> Runtime:
    """Instantiate a built-in runtime by name."""
    if name == "process":
        from .process import ProcessRuntime

        return ProcessRuntime(options)
    if name == "docker":
        from .docker import DockerRuntime

        return DockerRuntime(options)
    raise ValueError(f"unknown runtime {name!r}; choose one of {', '.join(RUNTIME_CHOICES)}")
