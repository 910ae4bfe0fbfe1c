"""``backendbench agent-image [--with NAME ...]``: build and tag the agent images, print their tags.

Without ``--with`` it builds the default agent image (the offline base image plus git, curl
and build tools) and tags it ``backendbench/agent:latest`` too; each ``--with`` adds the image
of a built-in agent CLI on top (``backendbench/agent-<name>:<hash>`` and ``:latest``), the one
``--bench-model=cmd:<name>:<model>`` runs in. Builds are cached by content: a second call only
prints the tags.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..agents.adapters import ADAPTERS, ALIASES
from ..errors import HarnessError


def add_parser(sub: Any) -> None:
    """The subcommand's arguments."""
    parser = sub.add_parser("agent-image", help="build and tag the agent sandbox images (default, and the built-in agent CLIs')")
    names = sorted({*ADAPTERS, *ALIASES})
    parser.add_argument("--with", dest="with_", action="append", default=[], choices=names, metavar="NAME",
                        help=f"also build this agent CLI's image (repeatable): {', '.join(sorted(ADAPTERS))}")
    parser.add_argument("--base-image", default=None, help="the offline base image to build on (default: backendbench/python:3.11)")


def run(args: argparse.Namespace) -> int:
    """Build what was asked for; print ``name<TAB>content tag<TAB>stable tag`` per image."""
    import docker
    from docker.errors import DockerException

    from ..agents.adapters import find_adapter
    from ..agents.agent_image import AGENT_IMAGE_REPOSITORY, ensure_adapter_image, ensure_agent_image, retag
    from ..runtime.base import DEFAULT_BASE_IMAGE, default_cache_dir

    adapters = []
    for name in dict.fromkeys(args.with_):  # checked before any build: a typo costs no image
        adapter = find_adapter(name)
        if adapter is None:  # argparse's choices stop this on the command line; a caller's own Namespace may not
            raise HarnessError(f"--with {name}: no built-in agent CLI of that name; choose from {', '.join(sorted({*ADAPTERS, *ALIASES}))}")
        adapters.append(adapter)
    base = args.base_image or DEFAULT_BASE_IMAGE
    try:
        client = docker.from_env(timeout=1800)
    except DockerException as err:
        raise HarnessError(f"the docker engine does not answer ({err}); start dockerd (see `backendbench doctor`)") from err
    try:
        tag = ensure_agent_image(client, base, default_cache_dir())
        retag(client, tag, f"{AGENT_IMAGE_REPOSITORY}:latest")
        print(f"agent\t{tag}\t{AGENT_IMAGE_REPOSITORY}:latest", flush=True)
        for adapter in adapters:
            print(f"{adapter.name}\t{ensure_adapter_image(client, adapter, base, default_cache_dir())}\t{adapter.stable_tag}", flush=True)
    finally:
        client.close()
    return 0
