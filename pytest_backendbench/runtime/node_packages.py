"""A Node candidate's npm dependencies for the process runtime.

A Dockerfile installs them in the image; the process runtime runs the candidate from its own
folder, so it installs ``package.json``'s dependencies (with ``package-lock.json`` when given)
into the candidate's prepared environment and points ``NODE_PATH`` there: CommonJS
``require`` then finds them without writing into the candidate's folder.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..errors import BuildFailure, HarnessError

MANIFESTS = ("package.json", "package-lock.json", "npm-shrinkwrap.json")


def node_manifest_bytes(candidate_dir: Path) -> bytes:
    """The manifests' contents, for the environment's cache key (empty without package.json)."""
    if not (candidate_dir / "package.json").is_file():
        return b""
    return b"\0".join(name.encode() + b"\0" + (candidate_dir / name).read_bytes() for name in MANIFESTS if (candidate_dir / name).is_file())


def node_modules_dir(environment: Path) -> Path:
    """Where install_node_packages puts node_modules inside a prepared environment."""
    return environment / "node" / "node_modules"


def install_node_packages(candidate_dir: Path, environment: Path, timeout_s: float) -> str:
    """``npm install --omit=dev`` of the candidate's manifests into ``environment``; returns the log."""
    npm = shutil.which("npm")
    if npm is None:
        raise HarnessError(
            f"{candidate_dir / 'package.json'} names npm dependencies and this machine has no npm: "
            "install Node.js with npm (Debian: apt-get install nodejs npm) or use --bench-runtime=docker"
        )
    target = environment / "node"
    target.mkdir(parents=True, exist_ok=True)
    for name in MANIFESTS:
        if (candidate_dir / name).is_file():
            shutil.copy2(candidate_dir / name, target / name)
    argv = [npm, "install", "--omit=dev", "--no-audit", "--no-fund", "--prefix", str(target)]
    try:
        proc = subprocess.run(argv, cwd=target, capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired as err:
        raise BuildFailure(f"npm install of package.json took longer than {timeout_s:g}s") from err
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        tail = "\n".join(log.strip().splitlines()[-20:])
        raise BuildFailure(f"npm could not install package.json's dependencies (exit {proc.returncode})", tail)
    return log
