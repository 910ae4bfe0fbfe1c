"""Which of BaxBench's framework images build here, and their Dockerfiles rebuilt from our base.

BaxBench builds every candidate on a public image (``nikolaik/python-nodejs`` for Python,
``node:22`` for JavaScript, ``golang``, ``php``, ``ruby``, ``rust``). Here images come from the
offline base image plus Debian, PyPI and npm packages only, so a framework is importable when
everything its image needs comes from those three. The Dockerfile keeps BaxBench's template
(its steps, ``ENV APP_SECRET``, ``ENTRYPOINT``) and replaces only the ``FROM`` line by the
base image with what BaxBench's image had: ``sqlite3`` and ``procps`` (its tests run
``sqlite3`` and ``ps`` inside), and for JavaScript Node.js and npm from Debian with the
toolchain native modules (bcrypt, sqlite3) compile with when no prebuilt binary is reachable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

BASE_IMAGE = "backendbench/python:3.11"

SUPPORTED = ("Python-Flask", "Python-FastAPI", "Python-Django", "Python-aiohttp", "JavaScript-express", "JavaScript-koa")
"""BaxBench frameworks whose images build here (the default selection of the import)."""

UNSUPPORTED = {
    "Go-Fiber": "its image downloads Go modules from the Go module proxy (go mod tidy), which is not reachable here",
    "Go-Gin": "its image downloads Go modules from the Go module proxy (go mod tidy), which is not reachable here",
    "Go-net/http": "its image downloads Go modules from the Go module proxy (go mod tidy), which is not reachable here",
    "PHP-Lumen": "its image installs Composer from getcomposer.org and Lumen from Packagist, neither reachable here",
    "Ruby-Rails": "its image installs Rails from RubyGems (bundler install), which is not reachable here",
    "Rust-Actix": "its image downloads crates from crates.io (cargo build), which is not reachable here",
    "JavaScript-nest": "its image clones nestjs/typescript-starter from GitHub (not reachable here) and needs Node.js >= 20",
    "JavaScript-fastify": "fastify 5 needs Node.js >= 20 and Debian's nodejs (the only Node.js reachable here) is 18",
}
"""Every other BaxBench framework, with why its image cannot be built from Debian/PyPI/npm."""

SYSTEM_PACKAGES = "sqlite3 procps"
NODE_PACKAGES = "nodejs npm build-essential libnode-dev"
"""Debian's Node.js with npm, and what node-gyp needs to compile native modules offline."""

REPLACED_COMMANDS = {
    # Compiler: Node.js from NodeSource (not reachable) -> Debian's nodejs with npm
    "curl -sL https://deb.nodesource.com/setup_16.x | sudo -E bash -": "apt-get install -y npm",
}
"""Scenario build commands that fetch from hosts not reachable here, and their Debian equivalent."""


@dataclass(frozen=True)
class FrameworkImage:
    """The task's Dockerfile and the manifest files copied next to it (``build_files``)."""

    dockerfile: str
    build_files: dict[str, str]
    notes: list[str]


def base_lines(language: str) -> list[str]:
    """What replaces BaxBench's ``FROM`` line."""
    lines = [
        f"FROM {BASE_IMAGE}",
        f"RUN apt-get update && apt-get install -y --no-install-recommends {SYSTEM_PACKAGES}",
    ]
    if language == "JavaScript":
        # node-gyp from Debian runs Debian's gyp: it needs the system Python, not the base image's venv
        lines += [f"RUN apt-get install -y --no-install-recommends {NODE_PACKAGES}", "ENV npm_config_nodedir=/usr npm_config_python=/usr/bin/python3"]
    return lines


def framework_image(env: dict[str, Any], commands: list[str]) -> FrameworkImage:
    """BaxBench's Dockerfile for ``env`` with the scenario's extra ``commands``, on our base."""
    notes = []
    run = []
    for command in commands:
        replaced = REPLACED_COMMANDS.get(command)
        if replaced is not None:
            notes.append(f"build command {command!r} fetches from a host not reachable here; replaced by {replaced!r}")
            command = replaced
        run.append(f"RUN {command}")
    template = str(env["dockerfile"])
    origin = re.search(r"^FROM (\S+)", template, re.MULTILINE)
    if origin is None:
        raise ValueError(f"BaxBench's Dockerfile for {env['id']} has no FROM line")
    notes.append(f"image built from {BASE_IMAGE} (Debian 12, Python 3.11{', Debian nodejs 18' if env['language'] == 'JavaScript' else ''}) instead of {origin.group(1)}")
    body = template.replace(origin.group(0), "\n".join(base_lines(str(env["language"]))), 1)
    dockerfile = body.format(entrypoint_cmd=env["entrypoint_cmd"], additional_commands="\n".join(run))
    header = f"# BaxBench's {env['id']} image, rebuilt from the offline base image (written by `backendbench import baxbench`)\n"
    return FrameworkImage(header + dockerfile.lstrip("\n"), {name: text.lstrip("\n") for name, text in env["manifest_files"].items()}, notes)
