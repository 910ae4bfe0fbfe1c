"""Where an agent works: one labelled container per (task, sample), or a temp dir as a fallback.

The docker sandbox runs on the same engine as the evaluation runtime. ``/workspace`` holds only
the task's visible material (``prepare_workspace``) and, when a disk limit is set, is a
size-limited tmpfs *volume*: a plain ``--tmpfs`` mount would be invisible to ``get_archive``
(the engine reads archives from the host's view of the container), while a local volume of
type tmpfs is mounted by the engine and copies out like any folder; no root quotas needed.
Its pages count against the container's memory limit. Memory, CPUs and pids are cgroup
limits; the per-command timeout kills the command's process group and leaves the sandbox
running; the wall time bounds the whole sample. Network ``bridge`` gives the sandbox its own
labelled bridge network (the agent can ``pip install`` but cannot see other samples'
sandboxes); ``none`` leaves it only a loopback interface.

PID 1 is a ``bash`` loop: it reaps orphans (servers an agent started in the background) and,
being PID 1, survives ``kill -9 -1``. Commands go through one long-lived shell (``shell.py``).
The container, its volume and its network carry the session, worker, task and role labels, so
``close``, the plugin's exit-time reaper and ``backendbench clean`` all find them; ``close``
also runs at interpreter exit if nobody called it.

``engine="process"`` runs commands with ``bash -lc`` in a temporary directory on the host,
with timeouts and output caps but no isolation whatsoever, and warns that it is not sandboxed.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import secrets
import tarfile
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..errors import HarnessError
from ..runtime.base import DEFAULT_BASE_IMAGE, SESSION_LABEL, default_cache_dir
from ..runtime.cleanup import TASK_LABEL, WORKER_LABEL
from .agent_image import ROLE_LABEL, ensure_agent_image
from .process_sandbox import ProcessSandbox
from .sandbox_base import (
    ENGINES,
    NETWORKS,
    WORKSPACE,
    Sandbox,
    SandboxLimits,
    SandboxSpec,
    UnsandboxedAgentWarning,
    WallClock,
    check_spec,
    extract_tar,
    workspace_files,
)
from .shell import CommandResult, ExecShell

__all__ = [
    "NETWORKS",
    "WORKSPACE",
    "CommandResult",
    "DockerSandbox",
    "ProcessSandbox",
    "Sandbox",
    "SandboxLimits",
    "SandboxSpec",
    "UnsandboxedAgentWarning",
    "open_sandbox",
]

SAMPLE_LABEL = "io.backendbench.sample"
SANDBOX_ROLE = "agent-sandbox"
# PID 1: reaps orphans (bash waits for any child) and, as PID 1, is spared by `kill -9 -1`.
KEEPER = "trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"
# Root inside the sandbox keeps what package managers need (apt drops to _apt, dpkg chowns)
# and loses the rest of Docker's default set (raw sockets, mknod, chroot, audit, setfcap).
CAPABILITIES = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "SETGID", "SETUID", "NET_BIND_SERVICE"]
LOG_CONFIG = {"type": "json-file", "config": {"max-size": "1m", "max-file": "1"}}


def open_sandbox(spec: SandboxSpec, engine: str) -> DockerSandbox | ProcessSandbox:
    """Start a sandbox for ``spec`` on ``engine`` ("docker" or "process"); also a context manager.

    Raises ``HarnessError`` (with what to do) when the engine does not answer or the image is
    missing, ``ValueError`` for a bad engine, network or limit. Whatever fails during start,
    everything created so far is removed.
    """
    check_spec(spec)
    if engine == "docker":
        return DockerSandbox(spec)
    if engine == "process":
        return ProcessSandbox(spec)
    raise ValueError(f"sandbox engine {engine!r}: expected one of {', '.join(ENGINES)}")



class DockerSandbox(WallClock):
    """A labelled container with /workspace, driven through one long-lived shell."""

    workspace = WORKSPACE
    sandboxed = True

    def __init__(self, spec: SandboxSpec) -> None:
        from ..runtime.engine import docker_name

        self.spec = spec
        self.limits = spec.limits
        self.image = ""
        self.description = ""
        self.container: Any = None
        self.volume: Any = None
        self.network: Any = None
        self._client: Any = None
        self._shell: ExecShell | None = None
        self._lock = threading.Lock()
        self._close_lock = threading.Lock()
        self._closed = False
        self._gone: str | None = None  # why the container is no longer usable
        self.name = f"bb-{docker_name(spec.session_id)[:24]}-{docker_name(spec.key)[:40]}-agent-{secrets.token_hex(3)}"
        self.labels = {
            SESSION_LABEL: spec.session_id,
            WORKER_LABEL: spec.worker_id,
            TASK_LABEL: spec.task.id,
            SAMPLE_LABEL: spec.key,
            ROLE_LABEL: SANDBOX_ROLE,
        }
        atexit.register(self.close)
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        self._deadline = time.monotonic() + self.limits.wall_s

    # -- start -----------------------------------------------------------------------------

    def _start(self) -> None:
        import docker
        from docker.utils import kwargs_from_env

        from ..runtime.docker import EngineClient

        try:
            # The evaluation runtime's client: same engine, same TLS handling of DOCKER_* settings.
            self._client = EngineClient(**kwargs_from_env(), version="auto", timeout=120)
        except docker.errors.DockerException as err:
            raise HarnessError(f"the docker engine does not answer ({err}); start dockerd or run the agent with the process engine") from err
        client = self._client
        self.image = self._image()
        limits = self.limits
        if self.spec.network == "bridge":
            self.network = self._docker(
                lambda: client.networks.create(f"{self.name}-net", driver="bridge", labels={**self.labels, ROLE_LABEL: "agent-network"}),
                "creating the sandbox network",
            )
        volumes: dict[str, dict[str, str]] = {}
        if limits.disk is not None:
            self.volume = self._docker(
                lambda: client.volumes.create(
                    name=f"{self.name}-ws",
                    driver="local",
                    driver_opts={"type": "tmpfs", "device": "tmpfs", "o": f"size={limits.disk},mode=1777"},
                    labels={**self.labels, ROLE_LABEL: "agent-workspace"},
                ),
                "creating the sandbox workspace volume",
            )
            volumes[self.volume.name] = {"bind": WORKSPACE, "mode": "rw"}
        kwargs: dict[str, Any] = {
            "name": self.name,
            "entrypoint": ["bash", "-c", KEEPER],
            "command": [],
            "detach": True,
            "hostname": "sandbox",
            "working_dir": WORKSPACE,
            "environment": dict(self.spec.env),
            "labels": self.labels,
            "mem_limit": limits.memory,
            "memswap_limit": limits.memory,  # no swap: a memory hog meets the OOM killer
            "nano_cpus": int(limits.cpus * 1e9),
            "pids_limit": limits.pids,
            "cap_drop": ["ALL"],
            "cap_add": CAPABILITIES,
            "security_opt": ["no-new-privileges"],
            "log_config": docker.types.LogConfig(**LOG_CONFIG),
            "volumes": volumes,
        }
        if self.network is not None:
            kwargs["network"] = self.network.name
        else:
            kwargs["network_mode"] = "none"
        self.container = self._docker(lambda: client.containers.create(self.image, **kwargs), f"creating the sandbox container {self.name}")
        try:
            self.container.start()
        except docker.errors.APIError as err:
            raise HarnessError(
                f"the sandbox container from {self.image} did not start: {err.explanation or err}; the sandbox needs "
                "`bash` on the image's PATH (pass another --agent-image)"
            ) from err
        self._put_workspace()
        self._docker(self.container.reload, "inspecting the sandbox container")
        env = (self.container.attrs.get("Config") or {}).get("Env") or []
        image_path = next((e.partition("=")[2] for e in env if e.startswith("PATH=")), None)
        self._shell = ExecShell(client, self.container, WORKSPACE, limits.output_bytes, image_path)
        self._shell.start()
        disk = f"/workspace {limits.disk} tmpfs" if limits.disk else "/workspace unbounded"
        self.description = (
            f"docker sandbox {self.image} (network {self.spec.network}, memory {limits.memory}, cpus {limits.cpus:g}, "
            f"pids {limits.pids}, {disk})"
        )

    def _image(self) -> str:
        import docker

        client = self._client
        if self.spec.image is None:
            base = self.spec.base_image or DEFAULT_BASE_IMAGE
            return ensure_agent_image(client, base, self.spec.cache_dir or default_cache_dir())
        image = self.spec.image
        try:
            client.api.inspect_image(image)
        except docker.errors.ImageNotFound:
            try:
                client.images.pull(image)
            except docker.errors.DockerException as err:
                raise HarnessError(
                    f"the agent image {image} is neither local nor pullable ({err}); build or pull it "
                    f"(docker pull {image}), or drop --agent-image to use the default agent image"
                ) from err
        except docker.errors.DockerException as err:
            raise HarnessError(f"the docker engine failed inspecting {image}: {err}") from err
        return image

    def _put_workspace(self) -> None:
        """The visible task, tarred on the host and unpacked into the (now mounted) volume."""
        buffer = io.BytesIO()
        with tempfile.TemporaryDirectory(prefix="backendbench-workspace-") as tmp:
            workspace_files(self.spec, Path(tmp))
            with tarfile.open(fileobj=buffer, mode="w") as tar:
                for path in sorted(Path(tmp).rglob("*")):
                    info = tar.gettarinfo(str(path), arcname=path.relative_to(tmp).as_posix())
                    # Writable by whatever user the image runs as.
                    info.uid = info.gid = 0
                    info.uname = info.gname = "root"
                    info.mode = 0o777 if info.isdir() else 0o666
                    if info.isfile():
                        with path.open("rb") as handle:
                            tar.addfile(info, handle)
                    else:
                        tar.addfile(info)
        ok = self._docker(lambda: self.container.put_archive(WORKSPACE, buffer.getvalue()), "copying the task into the sandbox")
        if not ok:
            raise HarnessError(f"the engine refused to copy the task into {self.name}:{WORKSPACE}")

    def _docker(self, call: Any, what: str) -> Any:
        import docker
        import requests

        try:
            return call()
        except (docker.errors.DockerException, requests.RequestException) as err:
            raise HarnessError(f"the docker engine failed {what}: {getattr(err, 'explanation', None) or err}") from err

    # -- Sandbox ---------------------------------------------------------------------------

    def run(self, command: str, timeout_s: float | None = None) -> CommandResult:
        """``bash -lc command`` in /workspace; a timeout kills the command's process group only."""
        if self._closed:
            raise HarnessError(f"sandbox {self.name} is closed; open a new one")
        if self._gone is not None:
            return CommandResult(exit_code=None, output=f"[not run: {self._gone}]\n", seconds=0.0, timed_out=False)
        timeout = self._effective_timeout(timeout_s)
        if timeout <= 0:
            return self._wall_spent()
        shell = self._shell
        if shell is None:
            raise HarnessError(f"sandbox {self.name} has no shell; it failed to start")
        with self._lock:
            try:
                return shell.run(command, timeout)
            except HarnessError:
                reason = self._exit_reason()
                if reason is None:
                    raise
                self._gone = f"the sandbox container stopped ({reason}); its workspace is lost"
                return CommandResult(exit_code=None, output=f"[{self._gone}]\n", seconds=0.0, timed_out=False)

    def _exit_reason(self) -> str | None:
        import docker

        try:
            self.container.reload()
        except docker.errors.NotFound:
            return "the container was removed"
        except docker.errors.DockerException:
            return None
        state = self.container.attrs.get("State") or {}
        if state.get("Running"):
            return None
        if state.get("OOMKilled"):
            return f"killed by the OOM killer, memory limit {self.limits.memory}"
        return f"exited with code {state.get('ExitCode')}"

    def copy_out(self, dest: Path) -> None:
        """The workspace through the engine's archive API into ``dest`` (links out and devices skipped)."""
        if self._closed:
            raise HarnessError(f"sandbox {self.name} is closed; copy the workspace out before closing it")
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
            def fetch() -> None:
                chunks, _ = self.container.get_archive(f"{WORKSPACE}/.")
                for chunk in chunks:
                    spool.write(chunk)

            self._docker(fetch, f"copying {WORKSPACE} out of {self.name}")
            spool.seek(0)
            with tarfile.open(fileobj=spool, mode="r:") as tar:
                extract_tar(tar, dest)

    def host_address(self) -> str | None:
        """The address at which the sandbox reaches this host: its bridge network's gateway
        (None with network none). A host server bound to that address, or to 0.0.0.0, answers."""
        if self.network is None:
            return None
        self._docker(self.network.reload, "inspecting the sandbox network")
        for config in (self.network.attrs.get("IPAM") or {}).get("Config") or []:
            if isinstance(config, dict) and config.get("Gateway"):
                return str(config["Gateway"]).partition("/")[0]
        return None

    def copy_folder_out(self, relative: str, dest: Path) -> bool:
        """Copy the workspace folder ``relative`` (scratch included) into ``dest``; False when it is absent."""
        if self._closed:
            raise HarnessError(f"sandbox {self.name} is closed; copy files out before closing it")
        import docker

        try:
            chunks, _ = self.container.get_archive(f"{WORKSPACE}/{relative.strip('/')}/.")
            data = b"".join(chunks)
        except docker.errors.NotFound:
            return False
        except docker.errors.DockerException as err:
            raise HarnessError(f"the docker engine failed copying {relative} out of {self.name}: {err}") from err
        dest.mkdir(parents=True, exist_ok=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            extract_tar(tar, dest, keep_scratch=True)
        return True

    def close(self) -> None:
        """Remove the container, its workspace volume and its network; safe to call twice."""
        # Its own lock: close may come from atexit or another thread while a command holds _lock.
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        atexit.unregister(self.close)
        import docker

        if self._shell is not None:
            self._shell.close()
        problems: list[str] = []
        for what, obj, remove in (
            ("container", self.container, lambda o: o.remove(force=True, v=True)),
            ("volume", self.volume, lambda o: o.remove(force=True)),
            ("network", self.network, lambda o: o.remove()),
        ):
            if obj is None:
                continue
            try:
                remove(obj)
            except docker.errors.NotFound:
                pass
            except docker.errors.DockerException as err:
                if "in progress" not in str(err):
                    problems.append(f"{what} {getattr(obj, 'name', obj)}: {err}")
        if self._client is not None:
            with contextlib.suppress(Exception):
                self._client.close()
        if problems:
            raise HarnessError(
                "could not remove the agent sandbox (" + "; ".join(problems) + f"); run `backendbench clean --session {self.spec.session_id}`"
            )

