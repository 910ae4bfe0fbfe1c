"""The process runtime: candidates as local subprocesses, for trusted code only.

The build phase gives each candidate its own virtual environment with its requirements.txt
(and a Node candidate's package.json dependencies) installed, cached by their content hash, so candidates never touch the
harness's environment and an unchanged candidate is not reinstalled. Mocks run as local
processes; a ``database: postgres`` task gets a throwaway local cluster (db/providers/).
Every child runs in its own process group and dies with the harness.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..candidates import Candidate
from ..errors import BootFailure, BuildFailure, HarnessError
from ..host.processes import die_with_parent, free_port
from ..host.wait import HttpReady, PortOpen, WaitStrategy, wait_until_ready
from ..tasks import Task
from .base import CandidateImage, MockSpec, RuntimeOptions, candidate_environment
from .node_packages import install_node_packages, node_manifest_bytes, node_modules_dir

if TYPE_CHECKING:
    from ..db.providers.database import TaskDatabase

class ManagedProcess:
    """One child process in its own group, its output in a log file."""

    def __init__(self, name: str, argv: list[str], cwd: Path, env: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.argv = argv
        self.cwd = cwd
        self.env = env
        self.log_path = log_path
        self.popen: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Spawn the process; an unstartable command is the candidate's fault."""
        log = self.log_path.open("ab")
        try:
            self.popen = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=die_with_parent,  # noqa: PLW1509 - only prctl, async-signal-safe enough; no locks taken
            )
        except FileNotFoundError as err:
            raise BootFailure(f"{self.name}: command not found: {self.argv[0]!r}", "check `run:` in candidate.yaml") from err
        except PermissionError as err:
            raise BootFailure(f"{self.name}: command not executable: {self.argv[0]!r}") from err
        finally:
            log.close()

    def exit_reason(self) -> str | None:
        """None while running; else how it ended."""
        if self.popen is None:
            return "never started"
        code = self.popen.poll()
        if code is None:
            return None
        if code < 0:
            return f"killed by signal {signal.Signals(-code).name}"
        return f"exited with code {code}"

    def logs(self, tail: int | None = None) -> str:
        """Everything the process printed (the last ``tail`` lines when given)."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        if tail is not None:
            text = "\n".join(text.splitlines()[-tail:])
        return text

    def stop(self, grace_s: float = 5.0) -> None:
        """SIGTERM the whole group, SIGKILL what is left after the grace period; idempotent."""
        if self.popen is None or self.popen.returncode is not None and not self._group_alive():
            return
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(self.popen.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.popen.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            if not self._group_alive():
                break
        # reap any straggler of the group (e.g. a worker process the candidate forked)
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def _group_alive(self) -> bool:
        if self.popen is None:
            raise HarnessError(f"{self.name}: asked whether it is alive before it was started (runtime bug)")
        try:
            os.killpg(self.popen.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _argv(command: str, python: str | None = None) -> list[str]:
    argv = shlex.split(command)
    if python and argv and argv[0] in ("python", "python3"):
        argv[0] = python
    return argv


def _health_strategies(host: str, port: int, health_path: str | None) -> list[WaitStrategy]:
    strategies: list[WaitStrategy] = [PortOpen(host, port)]
    if health_path:
        strategies.append(HttpReady(f"http://{host}:{port}{health_path}"))
    return strategies


class ProcessService:
    """A candidate running as a local process with its mocks (the ``RunningService`` protocol)."""

    def __init__(self, runtime: ProcessRuntime, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> None:
        self.runtime = runtime
        self.image = image
        self.task = task
        self.mocks = mocks
        self.workdir = Path(tempfile.mkdtemp(prefix=f"bb-{task.id}-", dir=runtime.session_dir))
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.mock_urls: dict[str, str] = {}
        self.mock_urls_for_candidate = self.mock_urls  # one address for both on the host
        self.database_url: str | None = None
        self.database: TaskDatabase | None = None
        self.ready_seconds = 0.0
        self._mock_processes: list[ManagedProcess] = []
        self._process: ManagedProcess | None = None

    def start(self) -> None:
        """Start the database and mocks, then the candidate, and wait until each is healthy."""
        try:
            if self.task.database == "postgres":
                from ..db.providers import local_database

                self.database = local_database(self.runtime.options.postgres_provider, self.runtime.options.cache_dir, self.task.id)
                self.database.start()
                self.database_url = self.database.url_for_harness
            for mock in self.mocks:
                port = free_port()
                proc = ManagedProcess(
                    f"mock {mock.name}",
                    _argv(mock.run, sys.executable),
                    mock.path,
                    {**os.environ, "PORT": str(port), "PYTHONUNBUFFERED": "1"},
                    self.workdir / f"mock-{mock.name}.log",
                )
                self._mock_processes.append(proc)
                proc.start()
                self.mock_urls[mock.name] = f"http://127.0.0.1:{port}"
                try:
                    wait_until_ready(
                        _health_strategies("127.0.0.1", port, mock.health_path),
                        30.0,
                        alive=proc.exit_reason,
                        logs=proc.logs,
                        what=f"mock {mock.name!r}",
                    )
                except BootFailure as err:
                    raise HarnessError(f"{err.title}\n{err.detail}") from err
            self._start_candidate()
        except BaseException:
            self.stop()
            raise

    def _start_candidate(self) -> None:
        venv = Path(self.image.ref)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
        if node_modules_dir(venv).is_dir():
            env["NODE_PATH"] = str(node_modules_dir(venv))
        database_env = self.database.candidate_environment() if self.database is not None else {}
        env.update(candidate_environment(self.task, self.port, self.mock_urls, self.mocks, database_env))
        env["HOST"] = "127.0.0.1"
        command = self.image.candidate.run
        if command is None:
            raise HarnessError(f"{self.image.candidate.key}: no run command (build checks it; runtime bug)")
        self._process = ManagedProcess(
            "candidate", _argv(command, str(venv / "bin" / "python")), self.image.candidate.path, env, self.workdir / "service.log"
        )
        self._process.start()
        timeout = self.runtime.options.boot_timeout_s or self.task.health.timeout_s
        self.ready_seconds = wait_until_ready(
            _health_strategies("127.0.0.1", self.port, self.task.health.path),
            timeout,
            alive=self._process.exit_reason,
            logs=self._process.logs,
            what=f"candidate for {self.task.id!r}",
        )

    def logs(self, tail: int | None = None) -> str:
        """The candidate's stdout/stderr."""
        return self._process.logs(tail) if self._process else ""

    def alive(self) -> bool:
        """Whether the candidate process still runs."""
        return self._process is not None and self._process.exit_reason() is None

    def exit_reason(self) -> str | None:
        """Why the candidate stopped, or None while it runs."""
        return self._process.exit_reason() if self._process else "never started"

    def restart(self) -> None:
        """Stop the candidate (mocks keep running) and start it again on the same port."""
        if self._process is not None:
            self._process.stop()
        self._start_candidate()

    def stop(self) -> None:
        """Stop the candidate, its mocks and its database; idempotent."""
        for proc in [self._process, *self._mock_processes]:
            if proc is not None:
                proc.stop()
        if self.database is not None:
            self.database.stop()
        self.runtime.forget(self)


class ProcessRuntime:
    """Runs candidates as subprocesses from per-requirements virtual environments."""

    name = "process"
    trusted_only = True

    def __init__(self, options: RuntimeOptions) -> None:
        self.options = options
        self.venv_root = options.cache_dir / "venvs"
        self.session_dir = Path(tempfile.mkdtemp(prefix=f"backendbench-{options.session_id}-"))
        self._services: list[ProcessService] = []

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        """Prepare (or reuse) the virtual environment holding the candidate's requirements."""
        if task.dockerfile is not None:
            raise HarnessError(
                f"task {task.id} supplies its own image ({task.dockerfile} in {task.benchmark_dir}); the process runtime "
                "cannot run it: use --bench-runtime=docker (Docker, or rootless Podman through DOCKER_HOST)"
            )
        if not candidate.run:
            raise BuildFailure(
                "candidate.yaml has no `run:` command",
                f"the process runtime starts `run:` from {candidate.path / 'candidate.yaml'}; "
                "add e.g. `run: python app.py`, or use --bench-runtime=docker for a Dockerfile-only candidate",
            )
        requirements = candidate.path / "requirements.txt"
        req_text = requirements.read_bytes() if requirements.is_file() else b""
        node_manifests = node_manifest_bytes(candidate.path)
        key = hashlib.sha256(sys.version.encode() + b"\0" + req_text + b"\0" + node_manifests).hexdigest()[:20]
        venv = self.venv_root / key
        started = time.monotonic()
        self.venv_root.mkdir(parents=True, exist_ok=True)
        with (self.venv_root / f"{key}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # another xdist worker may be building the same venv
            ready = venv / ".backendbench-ready"
            if ready.exists():
                return CandidateImage(candidate, str(venv), candidate.content_hash(), True, time.monotonic() - started)
            shutil.rmtree(venv, ignore_errors=True)
            log = self._create_venv(venv, requirements if req_text else None)
            if node_manifests:
                try:
                    log += "\n" + install_node_packages(candidate.path, venv, self.options.build_timeout_s)
                except BaseException:
                    shutil.rmtree(venv, ignore_errors=True)
                    raise
            ready.write_text("ok\n")
        return CandidateImage(candidate, str(venv), candidate.content_hash(), False, time.monotonic() - started, log)

    def _create_venv(self, venv: Path, requirements: Path | None) -> str:
        try:
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as err:
            shutil.rmtree(venv, ignore_errors=True)
            output = getattr(err, "stderr", b"") or b""
            raise HarnessError(f"could not create a virtual environment at {venv}: {err}\n{output.decode(errors='replace')}") from err
        if requirements is None:
            return "no requirements.txt: empty virtual environment"
        try:
            proc = subprocess.run(
                [str(venv / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-r", str(requirements)],
                check=False,
                capture_output=True,
                text=True,
                timeout=self.options.build_timeout_s,
            )
        except subprocess.TimeoutExpired as err:
            shutil.rmtree(venv, ignore_errors=True)
            raise BuildFailure(f"installing requirements.txt took longer than {self.options.build_timeout_s:g}s") from err
        log = proc.stdout + proc.stderr
        if proc.returncode != 0:
            shutil.rmtree(venv, ignore_errors=True)
            tail = "\n".join(log.strip().splitlines()[-20:])
            raise BuildFailure(f"pip could not install {requirements.name} (exit {proc.returncode})", tail)
        return log

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> ProcessService:
        """Start mocks and candidate; BootFailure when the candidate never gets healthy."""
        service = ProcessService(self, image, task, mocks)
        self._services.append(service)
        service.start()
        return service

    def forget(self, service: ProcessService) -> None:
        """Drop a stopped service from the set close() would stop."""
        if service in self._services:
            self._services.remove(service)

    def close(self) -> None:
        """Stop every service still running and remove the session's temp files."""
        for service in list(self._services):
            service.stop()
        shutil.rmtree(self.session_dir, ignore_errors=True)
