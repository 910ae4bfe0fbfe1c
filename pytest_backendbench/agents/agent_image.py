"""The default agent image: the offline Python base image plus git, curl and build tools.

Built on demand by the engine the first time a sandbox needs it, from the Dockerfile below
on top of ``backendbench/python:3.11`` (``apt-get`` inside the build reaches Debian's mirror
even where the engine cannot pull images). It is tagged by the hash of the Dockerfile and
the base image's id, labelled ``io.backendbench.cache=1`` like candidate and mock images (so
it outlives sessions and goes only with ``backendbench clean --images``), and built once
across xdist workers and threads (a ``flock``-ed slot).
"""

from __future__ import annotations

import hashlib
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests
import urllib3
from docker.errors import DockerException, NotFound
from docker.utils import kwargs_from_env

from ..errors import HarnessError
from ..runtime.cleanup import CACHE_LABEL
from ..runtime.docker import BuildOutcome, SlotLock, StreamCapturingAPIClient

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
    api = StreamCapturingAPIClient(**kwargs_from_env(), version=client.api.api_version, timeout=timeout_s + 60)
    outcome = BuildOutcome(tag=tag)
    watchdog = threading.Timer(timeout_s, api.abort)
    watchdog.daemon = True
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="backendbench-agent-image-") as context:
            (Path(context) / "Dockerfile").write_text(AGENT_DOCKERFILE, encoding="utf-8")
            stream = api.build(
                path=context,
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                decode=True,
                labels={CACHE_LABEL: "1", ROLE_LABEL: "agent-image"},
                buildargs={"BASE_IMAGE": base_image},
            )
            watchdog.start()
            for chunk in stream:
                outcome.feed(chunk)
    except (DockerException, requests.RequestException, urllib3.exceptions.HTTPError, OSError, ValueError) as err:
        if not api.aborted:
            raise HarnessError(f"the docker engine failed while building the agent image {tag}: {err}") from err
    finally:
        watchdog.cancel()
        api.close()
    if api.aborted:
        outcome.error = f"the build did not finish within {timeout_s:g}s"
    if outcome.error is not None or not _exists(client, tag):
        raise HarnessError(
            f"building the default agent image {tag} on {base_image} failed after {time.monotonic() - started:.0f}s: "
            f"{outcome.error or 'no image was produced'}\n"
            "hint: the build runs apt-get, which needs the Debian mirror; on a machine without it build an image "
            "yourself and pass it with --agent-image\n" + outcome.tail()
        )
