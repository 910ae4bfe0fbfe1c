"""The default agent image: the offline Python base image plus git, curl and build tools.

Built on demand by the engine the first time a sandbox needs it, from the Dockerfile below
on top of ``backendbench/python:3.11`` (``apt-get`` inside the build reaches Debian's mirror
even where the engine cannot pull images). It is tagged by the hash of the Dockerfile and
the base image's id, labelled ``io.backendbench.cache=1`` like candidate and mock images (so
it outlives sessions and goes only with ``backendbench clean --images``), and built once
across xdist workers and threads (a ``flock``-ed slot). ``ensure_adapter_image`` builds a
built-in agent CLI's image on top of it the same way (``adapters.py`` has the Dockerfiles) and
moves the stable ``:latest`` tags (``backendbench agent-image`` prints them).
"""

from __future__ import annotations

import hashlib
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests
from docker.errors import DockerException, NotFound
from docker.utils import kwargs_from_env

from ..errors import HarnessError
from ..runtime.cleanup import CACHE_LABEL
from ..runtime.engine import EngineAPIClient
from ..runtime.image_build import run_build
from ..runtime.slots import SlotLock

if TYPE_CHECKING:
    from .adapters import Adapter

AGENT_IMAGE_REPOSITORY = "backendbench/agent"
ROLE_LABEL = "io.backendbench.role"
BUILD_TIMEOUT_S = 1200.0
BUILD_WAIT_S = 3600.0

AGENT_DOCKERFILE = """\
ARG BASE_IMAGE=backendbench/python:3.11
FROM ${BASE_IMAGE}
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      git curl ca-certificates build-essential procps iproute2 less \\
 && rm -rf /var/lib/apt/lists/*
# `bash -l` runs /etc/profile, which resets PATH: keep the venv (pip-installed tools) on it.
RUN printf 'case ":$PATH:" in *:/opt/venv/bin:*) ;; *) PATH="/opt/venv/bin:$PATH";; esac\\nexport PATH\\n' \\
      > /etc/profile.d/00-venv.sh \\
 && git config --system user.name "backendbench agent" \\
 && git config --system user.email agent@backendbench.invalid \\
 && git config --system init.defaultBranch main \\
 && git config --system --add safe.directory /workspace
WORKDIR /workspace
"""


def agent_image_tag(base_image_id: str) -> str:
    """The tag of the default agent image built on a given base image."""
    digest = hashlib.sha256((AGENT_DOCKERFILE + "\0" + base_image_id).encode()).hexdigest()
    return f"{AGENT_IMAGE_REPOSITORY}:{digest[:16]}"


def ensure_agent_image(client: Any, base_image: str, cache_dir: Path, *, build_timeout_s: float = BUILD_TIMEOUT_S) -> str:
    """The default agent image's tag, built now when no engine holds it yet.

    Raises ``HarnessError`` naming the fix when the base image is missing or the build fails.
    """
    try:
        base_id = str(client.api.inspect_image(base_image)["Id"])
    except NotFound as err:
        raise HarnessError(
            f"the agent sandbox's base image {base_image} is missing; build it with "
            f"`python -m pytest_backendbench.runtime.base_image --tag {base_image}`, or pass --agent-image IMAGE"
        ) from err
    except (DockerException, requests.RequestException) as err:
        raise HarnessError(f"the docker engine failed inspecting {base_image}: {err}; start dockerd or use the process engine") from err
    tag = agent_image_tag(base_id)
    if _exists(client, tag):
        return tag
    # flock locks belong to open file descriptions, so the slot also serialises threads of one process.
    with SlotLock(cache_dir / "locks", "agent-image", 1).hold(BUILD_WAIT_S, "the agent image build"):
        if not _exists(client, tag):  # another worker may have built it while we waited
            _build(client, base_image, tag, build_timeout_s)
    return tag


def _exists(client: Any, tag: str) -> bool:
    try:
        client.api.inspect_image(tag)
    except NotFound:
        return False
    except (DockerException, requests.RequestException) as err:
        raise HarnessError(f"the docker engine failed inspecting {tag}: {err}") from err
    return True


def _build(client: Any, base_image: str, tag: str, timeout_s: float) -> None:
    api = EngineAPIClient(**kwargs_from_env(), version=client.api.api_version, timeout=timeout_s + 60)
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="backendbench-agent-image-") as context:
            (Path(context) / "Dockerfile").write_text(AGENT_DOCKERFILE, encoding="utf-8")
            labels = {CACHE_LABEL: "1", ROLE_LABEL: "agent-image"}
            outcome = run_build(api, Path(context), tag, labels, timeout_s=timeout_s, buildargs={"BASE_IMAGE": base_image})
    finally:
        api.close()
    if outcome.error is not None or not _exists(client, tag):
        raise HarnessError(
            f"building the default agent image {tag} on {base_image} failed after {time.monotonic() - started:.0f}s: "
            f"{outcome.error or 'no image was produced'}\n"
            "hint: the build runs apt-get, which needs the Debian mirror; on a machine without it build an image "
            "yourself and pass it with --agent-image\n" + outcome.tail()
        )


def ensure_adapter_image(client: Any, adapter: Adapter, base_image: str, cache_dir: Path, *, build_timeout_s: float = BUILD_TIMEOUT_S) -> str:
    """The image of a built-in agent CLI (``adapters.py``) on the default agent image, built when missing.

    Tagged by content (``backendbench/agent-<name>:<hash>``) and moved to the stable
    ``backendbench/agent-<name>:latest``; the default agent image gets ``backendbench/agent:latest``.
    """
    agent_image = ensure_agent_image(client, base_image, cache_dir, build_timeout_s=build_timeout_s)
    retag(client, agent_image, f"{AGENT_IMAGE_REPOSITORY}:latest")
    agent_id = str(client.api.inspect_image(agent_image)["Id"])
    tag = adapter.image_tag(agent_id)
    if not _exists(client, tag):
        with SlotLock(cache_dir / "locks", f"agent-image-{adapter.name}", 1).hold(BUILD_WAIT_S, f"the {adapter.title} image build"):
            if not _exists(client, tag):
                _build_adapter(client, adapter, agent_image, tag, build_timeout_s)
    retag(client, tag, adapter.stable_tag)
    return tag


def retag(client: Any, image: str, stable: str) -> None:
    repository, _, tag = stable.rpartition(":")
    try:
        client.api.tag(image, repository, tag, force=True)
    except (DockerException, requests.RequestException) as err:
        raise HarnessError(f"the docker engine failed tagging {image} as {stable}: {err}") from err


def _build_adapter(client: Any, adapter: Adapter, agent_image: str, tag: str, timeout_s: float) -> None:
    api = EngineAPIClient(**kwargs_from_env(), version=client.api.api_version, timeout=timeout_s + 60)
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix=f"backendbench-agent-{adapter.name}-") as context:
            (Path(context) / "Dockerfile").write_text(adapter.dockerfile, encoding="utf-8")
            labels = {CACHE_LABEL: "1", ROLE_LABEL: f"agent-image-{adapter.name}"}
            outcome = run_build(api, Path(context), tag, labels, timeout_s=timeout_s, buildargs={"AGENT_IMAGE": agent_image})
    finally:
        api.close()
    if outcome.error is not None or not _exists(client, tag):
        raise HarnessError(
            f"building the {adapter.title} image {tag} ({adapter.package}) failed after {time.monotonic() - started:.0f}s: "
            f"{outcome.error or 'no image was produced'}\n"
            f"hint: the build installs {adapter.package.partition(':')[2]} from its registry (pip: PyPI, npm: registry.npmjs.org) "
            "and may run apt-get; on a machine without them build the image elsewhere and name it with image= in "
            "the backendbench_agents ini line\n" + "".join(f"note: {note}\n" for note in adapter.notes) + outcome.tail()
        )
