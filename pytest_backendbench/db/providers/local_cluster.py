"""The process runtime's database: a throwaway PostgreSQL cluster run as a local child.

The cluster lives in a temp dir, copied from a template made once with ``initdb`` and cached,
and is started as a child ``postgres`` on a free port of 127.0.0.1 that dies with the harness
(``PR_SET_PDEATHSIG``). PostgreSQL refuses to run as root, so a root harness runs it as the
``postgres`` OS user (Debian's package creates it; else ``nobody``) in a temp dir that user
owns; any other user runs it as itself. Both logs are written into the cluster dir:
``postgresql.csv`` (the statement log) and the human-readable ``postgresql.log``.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import re
import shutil
import signal
import stat
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...config import environment_value
from ...errors import BootFailure, HarnessError
from ...host.processes import die_with_parent, free_port, kill_group_and_wait
from .credentials import DatabaseCredentials, DatabaseSecrets
from .database import PostgresReady, TaskDatabase
from .server import APP_DATABASE, APP_USER, HARNESS_USER, SERVER_SETTINGS, TEMPLATE_SQL

READY_TIMEOUT_S = 60.0
STOP_GRACE_S = 10.0
BINDIR_ENV = "BACKENDBENCH_PG_BINDIR"


def find_server_binaries(configured: str | None = None) -> Path | None:
    """The folder holding ``postgres`` and ``initdb``: $BACKENDBENCH_PG_BINDIR, ``pg_config
    --bindir``, Debian's /usr/lib/postgresql/<newest>/bin, then PATH; None when absent."""
    candidates: list[Path] = []
    chosen = configured or environment_value("pg_bindir")
    if chosen:
        candidates.append(Path(chosen))
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=False).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            out = ""
        if out:
            candidates.append(Path(out))

    def version_key(path: str) -> tuple[int, ...]:
        return tuple(int(p) for p in re.findall(r"\d+", Path(path).parent.name)) or (0,)

    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version_key, reverse=True)]
    on_path = shutil.which("postgres")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)
    for folder in candidates:
        if (folder / "postgres").is_file() and (folder / "initdb").is_file():
            return folder
    return None


def server_unavailable_reason() -> str | None:
    """None when PostgreSQL server binaries are installed, else what to do (tests skip on it)."""
    if find_server_binaries() is None:
        return f"PostgreSQL server binaries (postgres, initdb) not found; install them (Debian: apt-get install postgresql) or set {BINDIR_ENV}"
    return None


@dataclass(frozen=True)
class ServerUser:
    """The OS user the server runs as (never root: PostgreSQL refuses it)."""

    name: str
    uid: int
    gid: int

    @property
    def switch(self) -> bool:
        """Whether spawning needs to change user (the harness runs as root)."""
        return self.uid != os.geteuid()

    def spawn_kwargs(self) -> dict[str, Any]:
        """subprocess arguments that drop to this user (preexec_fn runs after the switch)."""
        if not self.switch:
            return {}
        return {"user": self.uid, "group": self.gid, "extra_groups": []}


def cluster_temp_root(user: ServerUser) -> Path:
    """Where clusters are made: the temp folder, or ``/tmp`` when the server's OS user cannot reach it.

    As root the server runs as ``postgres``, which cannot enter a private TMPDIR (``mktemp -d``,
    mode 0700, as CI runners and test harnesses make them): initdb would fail with "Permission
    denied". The cluster then lives in the first of TMPDIR, /tmp, /var/tmp that every user may
    traverse.
    """
    preferred = Path(tempfile.gettempdir())
    if not user.switch or _traversable_by_all(preferred):
        return preferred
    for fallback in (Path("/tmp"), Path("/var/tmp")):
        if fallback.is_dir() and _traversable_by_all(fallback):
            return fallback
    raise HarnessError(
        f"the PostgreSQL server runs as OS user {user.name}, which cannot enter the temp folder {preferred} "
        "(nor /tmp or /var/tmp): point TMPDIR to a folder every user may traverse (chmod o+x)"
    )


def _traversable_by_all(folder: Path) -> bool:
    """Whether every folder from / down to folder lets others pass (o+x)."""
    try:
        resolved = folder.resolve()
        return all(part.stat().st_mode & stat.S_IXOTH for part in (resolved, *resolved.parents))
    except OSError:
        return False


def server_user() -> ServerUser:
    """The current user, or for root the ``postgres`` user (else ``nobody``)."""
    import pwd

    if os.geteuid() != 0:
        entry = pwd.getpwuid(os.geteuid())
        return ServerUser(entry.pw_name, entry.pw_uid, entry.pw_gid)
    for name in ("postgres", "nobody"):
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            continue
        return ServerUser(name, entry.pw_uid, entry.pw_gid)
    raise HarnessError("running as root, PostgreSQL needs an unprivileged OS user; create a `postgres` user (Debian's postgresql package does)")


def _chown_tree(path: Path, user: ServerUser) -> None:
    if not user.switch:
        return
    os.chown(path, user.uid, user.gid)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.lchown(os.path.join(root, name), user.uid, user.gid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_clusters(temp_root: Path | None = None) -> int:
    """Remove cluster dirs of harnesses that died without cleaning up (SIGKILL); returns how many."""
    removed = 0
    root = temp_root or Path(tempfile.gettempdir())
    for folder in root.glob("backendbench-pg-*"):
        try:
            owner = int((folder / "harness.pid").read_text().strip())
        except (OSError, ValueError):
            continue
        if not _alive(owner):
            _kill_postmaster_of(folder / "data")
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _kill_postmaster_of(datadir: Path) -> None:
    try:
        pid = int((datadir / "postmaster.pid").read_text().split("\n", 1)[0])
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def cluster_template(bindir: Path, cache_dir: Path, user: ServerUser) -> Path:
    """A freshly initdb-ed data dir, made once per PostgreSQL version and OS user and cached.

    initdb takes seconds; copying its result takes a fraction of one. The template has no
    passwords: each task's copy gets its own (``DatabaseSecrets.setup_sql``).
    """
    version = subprocess.run([str(bindir / "postgres"), "--version"], capture_output=True, text=True, check=False).stdout.strip()
    key = re.sub(r"[^A-Za-z0-9.]+", "-", f"{version}-{user.name}").strip("-")
    root = cache_dir / "postgres"
    template = root / key
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # xdist workers may need it at the same time
        if (template / "PG_VERSION").is_file():
            return template
        # initdb writes where the server user may write: the cache may sit in root's home
        work = Path(tempfile.mkdtemp(prefix="backendbench-pginit-", dir=cluster_temp_root(user)))
        try:
            _chown_tree(work, user)
            data = work / "data"
            command = [
                str(bindir / "initdb"), "-D", str(data), "-U", HARNESS_USER, "--auth-local=trust", "--auth-host=scram-sha-256",
                "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions", "--wal-segsize=1",
            ]
            proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=300, **user.spawn_kwargs())
            if proc.returncode != 0:
                raise HarnessError(f"initdb failed (exit {proc.returncode}) as OS user {user.name}:\n{(proc.stdout + proc.stderr)[-2000:]}")
            single_user(bindir, data, "\n".join([*TEMPLATE_SQL, ""]), user)
            shutil.rmtree(template, ignore_errors=True)
            shutil.move(str(data), str(template))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return template


def single_user(bindir: Path, data: Path, sql: str, user: ServerUser) -> None:
    """Run setup statements (one per line) in single-user mode, before the server listens."""
    proc = subprocess.run(
        [str(bindir / "postgres"), "--single", "-D", str(data), "-c", "log_statement=none", "-c", "fsync=off", "postgres"],
        input=sql.encode(), capture_output=True, check=False, timeout=120, **user.spawn_kwargs(),
    )
    output = (proc.stdout + proc.stderr).decode(errors="replace")
    if proc.returncode != 0 or "ERROR:" in output:
        raise HarnessError(f"setting up the task database failed (postgres --single, exit {proc.returncode}):\n{output[-2000:]}")


class LocalPostgres(TaskDatabase):
    """A throwaway cluster run as a local child process (the process runtime's database)."""

    def __init__(self, cache_dir: Path, label: str = "task", bindir: Path | None = None, secrets_: DatabaseSecrets | None = None) -> None:
        super().__init__(secrets_)
        self.cache_dir = cache_dir
        self.label = re.sub(r"[^A-Za-z0-9_.-]+", "-", label)[:40]
        self.bindir = bindir
        self.folder: Path | None = None
        self.process: subprocess.Popen[bytes] | None = None
        self._stopped = False

    @property
    def candidate(self) -> DatabaseCredentials:
        return DatabaseCredentials("127.0.0.1", self.harness_port, APP_USER, self.secrets.app_password, APP_DATABASE)

    @property
    def log_dir(self) -> Path:
        return self._folder() / "log"

    def _folder(self) -> Path:
        if self.folder is None:
            raise HarnessError("the PostgreSQL cluster has no folder yet: it was used before start() (harness bug)")
        return self.folder

    @property
    def log_description(self) -> str:  # type: ignore[override]
        return str(self.log_dir / "postgresql.csv") if self.folder else "(not started)"

    def start(self) -> LocalPostgres:
        """Create, configure and start the cluster; on any failure remove what was made."""
        try:
            bindir = self.bindir or find_server_binaries()
            if bindir is None:
                raise HarnessError(server_unavailable_reason() or "PostgreSQL server binaries not found")
            user = server_user()
            temp_root = cluster_temp_root(user)
            remove_stale_clusters(temp_root)
            template = cluster_template(bindir, self.cache_dir, user)
            self.folder = Path(tempfile.mkdtemp(prefix=f"backendbench-pg-{self.label}-", dir=temp_root))
            (self.folder / "harness.pid").write_text(f"{os.getpid()}\n")
            data = self.folder / "data"
            subprocess.run(["cp", "-a", str(template), str(data)], check=True, capture_output=True)
            for sub in ("log", "sock"):
                (self.folder / sub).mkdir()
            _chown_tree(self.folder, user)
            self.harness_port = free_port()
            settings = {**SERVER_SETTINGS, "listen_addresses": "127.0.0.1", "port": str(self.harness_port),
                        "unix_socket_directories": str(self.folder / "sock"), "log_directory": str(self.log_dir)}
            argv = [str(bindir / "postgres"), "-D", str(data)]
            for name, value in settings.items():
                argv += ["-c", f"{name}={value}"]
            with (self.folder / "postmaster.out").open("ab") as out:
                self.process = subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                    preexec_fn=die_with_parent, **user.spawn_kwargs(),  # noqa: PLW1509 - prctl only, after the uid switch
                )
            from ...host.wait import wait_until_ready

            try:
                wait_until_ready(
                    [PostgresReady(self, self._connect_socket)], READY_TIMEOUT_S, alive=self._exit_reason, logs=self.server_log,
                    what="the task's PostgreSQL server",
                )
            except BootFailure as err:
                raise HarnessError(f"{err.title}\n{err.detail}") from err
            with self._connect_socket() as connection:
                for statement in self.secrets.password_sql():
                    connection.execute(statement)
        except BaseException:
            self.stop()
            raise
        return self

    def _connect_socket(self) -> Any:
        """The harness superuser over the cluster's private Unix socket (trust: only the
        server's OS user and root can open that folder); used before passwords are set."""
        import psycopg

        return psycopg.connect(
            host=str(self._folder() / "sock"), port=self.harness_port, user=HARNESS_USER, dbname=APP_DATABASE,
            options="-c log_statement=none", connect_timeout=5, autocommit=True,
        )

    def _exit_reason(self) -> str | None:
        if self.process is None:
            return "not started"
        code = self.process.poll()
        return None if code is None else f"exited with code {code}"

    def read_log(self, offset: int) -> bytes:
        try:
            with (self.log_dir / "postgresql.csv").open("rb") as handle:
                handle.seek(offset)
                return handle.read()
        except FileNotFoundError:
            return b""

    def server_log(self, tail: int = 40) -> str:
        if self.folder is None:
            return ""
        text = ""
        for name in ("postmaster.out", "log/postgresql.log"):
            try:
                text += (self.folder / name).read_text(errors="replace")
            except OSError:
                continue
        return "\n".join(text.splitlines()[-tail:])

    def stop(self) -> None:
        """Fast shutdown (SIGINT), SIGKILL after a grace period, then remove the cluster dir."""
        if self._stopped:
            return
        self._stopped = True
        super().stop()
        process = self.process
        if process is not None and process.poll() is None:
            for sig, grace in ((signal.SIGINT, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
                try:
                    os.killpg(process.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    process.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
        if process is not None:
            # backends outlive a killed postmaster briefly: take the group down and wait until
            # it is empty, so no postgres process is alive once the session has ended
            kill_group_and_wait(process.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=1.0)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

