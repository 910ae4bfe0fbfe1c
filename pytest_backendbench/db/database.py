"""PostgreSQL per task: a fresh server with statement logging, as the candidate and the harness see it.

A task with ``database: postgres`` gets its own server, created when the service boots and
removed when it stops:

- process runtime (``LocalPostgres``): a throwaway cluster in a temp dir, copied from a
  template made once with ``initdb`` and cached, started as a child ``postgres`` on a free
  port of 127.0.0.1 that dies with the harness (``PR_SET_PDEATHSIG``). PostgreSQL refuses to
  run as root, so a root harness runs it as the ``postgres`` OS user (Debian's package creates
  it; else ``nobody``) in a temp dir that user owns; any other user runs it as itself.
- docker runtime (``ContainerPostgres``, started by ``runtime/docker.py``): a sidecar container
  on the task's network, reachable by the candidate as ``postgres:5432``; its image is built
  from ``runtime/postgres/Dockerfile`` (or ``--postgres-image``) and its start script is passed
  inline, so any Debian-based image with the server binaries works.

Both start the server with ``log_statement=all`` into a CSV log (``postgresql.csv``; the
human-readable ``postgresql.log`` beside it uses ``log_line_prefix``: timestamp, session id,
pid). The candidate gets ``DATABASE_URL`` and ``DB_HOST/DB_PORT/DB_USERNAME/DB_PASSWORD/DB_NAME``
for a non-superuser role owning its database; the harness connects as a separate superuser
whose own statements are never attributed to the candidate (``StatementLog`` drops them).
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import decimal
import fcntl
import glob
import io
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BootFailure, HarnessError

HARNESS_USER = "backendbench"
APP_USER = "app"
APP_DATABASE = "app"
MARKER_APPLICATION = "backendbench-marker"
HARNESS_APPLICATION = "backendbench"
CONTAINER_PORT = 5432
CONTAINER_HOST_ALIAS = "postgres"
SNAPSHOT_ROWS = 5
READY_TIMEOUT_S = 60.0
LOG_WAIT_S = 10.0
STOP_GRACE_S = 10.0
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
BINDIR_ENV = "BACKENDBENCH_PG_BINDIR"
POSTGRES_DOCKERFILE_DIR = Path(__file__).parent / "runtime" / "postgres"

# Settings of every task server. fsync and friends are off: the cluster is thrown away.
SERVER_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "60",
    "shared_buffers": "32MB",
    # dynamic shared memory in the data dir: nothing is left in /dev/shm after a SIGKILL
    "dynamic_shared_memory_type": "mmap",
    "log_statement": "all",
    "logging_collector": "on",
    "log_destination": "stderr,csvlog",
    "log_filename": "postgresql.log",
    "log_rotation_age": "0",
    "log_rotation_size": "0",
    "log_line_prefix": "%m [%c] %p %q%u@%d %a ",
    "log_min_error_statement": "error",
    "timezone": "UTC",
}


# --- credentials ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DatabaseCredentials:
    """How one party reaches one database: host, port, role, password, database name."""

    host: str
    port: int
    user: str
    password: str
    dbname: str

    @property
    def url(self) -> str:
        """A libpq URL (``postgresql://user:password@host:port/dbname``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{self.user}:{self.password}@{host}:{self.port}/{self.dbname}"

    def environment(self) -> dict[str, str]:
        """The variables the contract promises a candidate of a ``database: postgres`` task."""
        return {
            "DATABASE_URL": self.url,
            "DB_HOST": self.host,
            "DB_PORT": str(self.port),
            "DB_USERNAME": self.user,
            "DB_PASSWORD": self.password,
            "DB_NAME": self.dbname,
        }


@dataclass(frozen=True)
class DatabaseSecrets:
    """The per-task passwords: the harness's superuser and the candidate's role."""

    harness_password: str = field(default_factory=lambda: secrets.token_hex(16))
    app_password: str = field(default_factory=lambda: secrets.token_hex(16))

    def setup_sql(self) -> str:
        """Statements that turn a fresh cluster into the task's database (one per line, for
        ``postgres --single``): the candidate's role and database, then the passwords."""
        return "\n".join([*TEMPLATE_SQL, *self.password_sql(), ""])

    def password_sql(self) -> list[str]:
        """The per-task passwords of the harness's superuser and the candidate's role."""
        return [
            f"ALTER ROLE {HARNESS_USER} PASSWORD '{self.harness_password}';",
            f"ALTER ROLE {APP_USER} PASSWORD '{self.app_password}';",
        ]


TEMPLATE_SQL = (f"CREATE ROLE {APP_USER} LOGIN;", f"CREATE DATABASE {APP_DATABASE} OWNER {APP_USER};")
"""What every task database starts from: the candidate's role owning an empty database."""


# --- the statement log ---------------------------------------------------------------------


@dataclass(frozen=True)
class LogRecord:
    """One row of PostgreSQL's CSV log (the columns every version since 9.0 writes)."""

    at: str
    user: str
    database: str
    pid: str
    session: str
    line: int
    vxid: str
    severity: str
    message: str
    detail: str
    query: str
    application: str


@dataclass
class CapturedStatement:
    """One statement a client sent, as the server logged it, and whether it took effect."""

    sql: str
    session: str
    pid: str
    at: str
    parameters: str = ""
    failed: bool = False
    rolled_back: bool = False

    @property
    def effective(self) -> bool:
        """False when the statement raised an error or its transaction was rolled back."""
        return not (self.failed or self.rolled_back)


_STATEMENT = re.compile(r"^(?:statement|execute(?: fetch from)? [^:]*?): (?P<sql>.*)$", re.DOTALL)
_PREPARE = re.compile(r"^prepare: PREPARE\s+\S+?(?:\s*\([^)]*\))?\s+AS\s+(?P<sql>.*)$", re.DOTALL | re.IGNORECASE)
_ROLLBACK = re.compile(r"^\s*(?:ROLLBACK|ABORT)(?:\s+(?:WORK|TRANSACTION))?\s*;?\s*$", re.IGNORECASE)
_COMMIT = re.compile(r"^\s*(?:COMMIT|END)(?:\s+(?:WORK|TRANSACTION))?\s*;?\s*$", re.IGNORECASE)


def parse_csvlog(data: bytes) -> list[LogRecord]:
    """Parse CSV log text (whole records only) into records; unparsable rows are skipped."""
    records = []
    for row in csv.reader(io.StringIO(data.decode("utf-8", errors="replace"))):
        if len(row) < 23:
            continue
        try:
            line = int(row[6])
        except ValueError:
            line = 0
        records.append(
            LogRecord(
                at=row[0], user=row[1], database=row[2], pid=row[3], session=row[5], line=line, vxid=row[9],
                severity=row[11], message=row[13], detail=row[14], query=row[19], application=row[22],
            )
        )
    return records


def statements_of(records: list[LogRecord], exclude_user: str = HARNESS_USER) -> list[CapturedStatement]:
    """The statements in ``records`` sent by anyone but ``exclude_user``, with their outcome.

    A statement followed by an ERROR of its session failed; every statement of a transaction
    (same session and virtual transaction id) that ends in ROLLBACK was rolled back.
    """
    statements: list[CapturedStatement] = []
    last_of_session: dict[str, CapturedStatement] = {}
    by_transaction: dict[tuple[str, str], list[CapturedStatement]] = {}
    last_transaction: dict[str, tuple[str, str]] = {}
    for record in records:
        if record.user == exclude_user:
            continue
        if record.severity in ("ERROR", "FATAL", "PANIC"):
            previous = last_of_session.get(record.session)
            if previous is not None:
                previous.failed = True
            continue
        if record.severity != "LOG":
            continue
        match = _STATEMENT.match(record.message)
        if match is None:
            continue
        sql = match.group("sql")
        parameters = record.detail[len("parameters: "):] if record.detail.startswith("parameters: ") else ""
        prepared = _PREPARE.match(record.detail)
        if prepared is not None:  # SQL-level EXECUTE: the prepared text is in the detail
            sql = prepared.group("sql")
        statement = CapturedStatement(sql=sql, session=record.session, pid=record.pid, at=record.at, parameters=parameters)
        statements.append(statement)
        last_of_session[record.session] = statement
        # In an aborted transaction the backend logs a virtual xid of "<backend>/0"; the
        # ROLLBACK (or COMMIT, which then rolls back) it receives ends the session's last one.
        aborted = record.vxid.endswith("/0") or not record.vxid
        key = last_transaction.get(record.session) if aborted else (record.session, record.vxid)
        if not aborted:
            last_transaction[record.session] = (record.session, record.vxid)
            by_transaction.setdefault((record.session, record.vxid), []).append(statement)
        ends_badly = _ROLLBACK.match(sql) is not None or (aborted and _COMMIT.match(sql) is not None)
        if ends_badly and key is not None:
            statement.rolled_back = True
            for member in by_transaction.get(key, []):
                member.rolled_back = True
    return statements


class StatementLog:
    """Per-item windows on a server's statement log, bounded by marker statements.

    ``mark()`` makes the harness send a unique statement (logged like any other) and returns
    its token; ``read_until(token)`` reads the log from where the last read stopped up to and
    including that marker's record. Because a backend logs a statement before it executes it,
    everything a request made the candidate send is in the log before the response arrives,
    and therefore before a marker the harness sends afterwards.
    """

    def __init__(self, database: TaskDatabase) -> None:
        self.database = database
        self.offset = 0
        self._connection: Any = None

    def mark(self) -> str:
        """Log a unique marker statement and return its token."""
        token = f"bb-mark-{uuid.uuid4().hex}"
        try:
            if self._connection is None or self._connection.closed:
                self._connection = self.database.connect(application=MARKER_APPLICATION, log_statements=True, autocommit=True)
            self._connection.execute(f"SELECT '{token}'")
        except Exception as err:  # psycopg.Error, OSError: the server is gone
            self.close()
            raise HarnessError(f"could not write a marker into the task database's statement log: {err}") from err
        return token

    def read_until(self, token: str, timeout_s: float = LOG_WAIT_S) -> list[LogRecord]:
        """Records from the last read up to and including the marker ``token``."""
        needle = token.encode()
        deadline = time.monotonic() + timeout_s
        while True:
            data = self.database.read_log(self.offset)
            position = data.find(needle)
            if position >= 0:
                end = data.find(b"\n", position)
                if end >= 0:
                    chunk = data[: end + 1]
                    self.offset += len(chunk)
                    return parse_csvlog(chunk)
            if time.monotonic() >= deadline:
                raise HarnessError(
                    f"the marker statement did not appear in the task database's statement log within {timeout_s:g}s "
                    f"(log {self.database.log_description}, read from byte {self.offset})"
                )
            time.sleep(0.01)

    def close(self) -> None:
        """Close the marker connection."""
        if self._connection is not None:
            with contextlib.suppress(Exception):  # closing a broken connection
                self._connection.close()
            self._connection = None


# --- the database of one task ---------------------------------------------------------------


class TaskDatabase:
    """One task's PostgreSQL: what the candidate is given, and the harness's access to it."""

    log_description = "(unknown)"

    def __init__(self, secrets_: DatabaseSecrets | None = None) -> None:
        self.secrets = secrets_ or DatabaseSecrets()
        self.harness_host = "127.0.0.1"
        self.harness_port = 0
        self._statement_log: StatementLog | None = None

    @property
    def candidate(self) -> DatabaseCredentials:
        """What the candidate is told (host as the candidate reaches the server)."""
        raise NotImplementedError

    @property
    def harness(self) -> DatabaseCredentials:
        """The harness's superuser login to the candidate's database."""
        return DatabaseCredentials(self.harness_host, self.harness_port, HARNESS_USER, self.secrets.harness_password, APP_DATABASE)

    @property
    def url_for_harness(self) -> str:
        """The candidate's credentials, with host and port as the harness reaches the server."""
        c = self.candidate
        return DatabaseCredentials(self.harness_host, self.harness_port, c.user, c.password, c.dbname).url

    def candidate_environment(self) -> dict[str, str]:
        """DATABASE_URL and DB_* for the candidate."""
        return self.candidate.environment()

    def connect(self, *, application: str = HARNESS_APPLICATION, log_statements: bool = False, autocommit: bool = False, read_only: bool = False) -> Any:
        """A psycopg connection as the harness superuser; its statements stay out of the log
        unless ``log_statements`` (only markers need that)."""
        import psycopg

        options = "-c statement_timeout=10000"
        if not log_statements:
            options += " -c log_statement=none"
        if read_only:
            options += " -c default_transaction_read_only=on"
        h = self.harness
        return psycopg.connect(
            host=h.host, port=h.port, user=h.user, password=h.password, dbname=h.dbname,
            application_name=application, options=options, connect_timeout=5, autocommit=autocommit,
        )

    @property
    def statement_log(self) -> StatementLog:
        """The per-item window on this server's statement log."""
        if self._statement_log is None:
            self._statement_log = StatementLog(self)
        return self._statement_log

    def read_log(self, offset: int) -> bytes:
        """The CSV statement log from byte ``offset`` on."""
        raise NotImplementedError

    def server_log(self, tail: int = 40) -> str:
        """The last lines of the human-readable server log (for failure messages)."""
        return ""

    def snapshot(self) -> dict[str, Any]:
        """Every table of the candidate's database: columns, keys, row count, first rows."""
        with self.connect(read_only=True) as connection:
            return take_snapshot(connection)

    def stop(self) -> None:
        """Stop the server and remove everything it left; idempotent."""
        if self._statement_log is not None:
            self._statement_log.close()


def database_of(service: object) -> TaskDatabase | None:
    """The TaskDatabase a running service was started with (None for ``database: none``)."""
    database = getattr(service, "database", None)
    return database if isinstance(database, TaskDatabase) else None


class PostgresReady:
    """A wait strategy (runtime/wait.py): ready when ``connect()`` logs in."""

    def __init__(self, database: TaskDatabase, connect: Callable[[], Any] | None = None) -> None:
        self.database = database
        self.connect = connect or (lambda: database.connect(autocommit=True))

    @property
    def description(self) -> str:
        return f"PostgreSQL at {self.database.harness_host}:{self.database.harness_port} to accept logins"

    def check(self) -> str | None:
        try:
            self.connect().close()
        except Exception as err:  # noqa: BLE001 - psycopg.OperationalError while starting
            text = str(err).strip()
            return text.splitlines()[0] if text else type(err).__name__
        return None


# --- process runtime: a local throwaway cluster ---------------------------------------------


def find_server_binaries(configured: str | None = None) -> Path | None:
    """The folder holding ``postgres`` and ``initdb``: $BACKENDBENCH_PG_BINDIR, ``pg_config
    --bindir``, Debian's /usr/lib/postgresql/<newest>/bin, then PATH; None when absent."""
    candidates: list[Path] = []
    chosen = configured or os.environ.get(BINDIR_ENV)
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
        work = Path(tempfile.mkdtemp(prefix="backendbench-pginit-"))
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

    def __init__(self, cache_dir: Path, label: str = "task", bindir: Path | None = None) -> None:
        super().__init__()
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
        assert self.folder is not None
        return self.folder / "log"

    @property
    def log_description(self) -> str:  # type: ignore[override]
        return str(self.log_dir / "postgresql.csv") if self.folder else "(not started)"

    def start(self) -> LocalPostgres:
        """Create, configure and start the cluster; on any failure remove what was made."""
        from ..runtime.process import _die_with_parent, free_port

        try:
            bindir = self.bindir or find_server_binaries()
            if bindir is None:
                raise HarnessError(server_unavailable_reason() or "PostgreSQL server binaries not found")
            user = server_user()
            remove_stale_clusters()
            template = cluster_template(bindir, self.cache_dir, user)
            self.folder = Path(tempfile.mkdtemp(prefix=f"backendbench-pg-{self.label}-"))
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
                    preexec_fn=_die_with_parent, **user.spawn_kwargs(),  # noqa: PLW1509 - prctl only, after the uid switch
                )
            from ..runtime.wait import wait_until_ready

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

        assert self.folder is not None
        return psycopg.connect(
            host=str(self.folder / "sock"), port=self.harness_port, user=HARNESS_USER, dbname=APP_DATABASE,
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
            try:  # backends outlive a killed postmaster only briefly; take the group down too
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


# --- docker runtime: a sidecar container ----------------------------------------------------


def sidecar_script() -> str:
    """The sidecar's command (``sh -c``): copy the image's template cluster (or initdb), apply
    the setup SQL from $BB_SETUP_SQL in single-user mode, then exec the server."""
    options = " ".join(f"-c {name}='{value}'" for name, value in SERVER_SETTINGS.items())
    return (
        "set -e\n"
        "BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)\n"
        '[ -n "$BIN" ] || BIN=$(dirname "$(command -v postgres)")\n'
        "D=/tmp/backendbench-pg/data; L=/tmp/backendbench-pg/log\n"
        'mkdir -p /tmp/backendbench-pg "$L" /tmp/backendbench-pg/sock\n'
        'if [ -f /opt/backendbench/pgtemplate/PG_VERSION ]; then cp -a /opt/backendbench/pgtemplate "$D"; '
        f'else "$BIN/initdb" -D "$D" -U {HARNESS_USER} --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >/dev/null; fi\n'
        'echo "host all all 0.0.0.0/0 scram-sha-256" >> "$D/pg_hba.conf"\n'
        'echo "host all all ::/0 scram-sha-256" >> "$D/pg_hba.conf"\n'
        'printf "%s" "$BB_SETUP_SQL" | "$BIN/postgres" --single -D "$D" -c log_statement=none -c fsync=off postgres >/dev/null\n'
        f'exec "$BIN/postgres" -D "$D" -c listen_addresses="*" -c port={CONTAINER_PORT} '
        f'-c unix_socket_directories=/tmp/backendbench-pg/sock -c log_directory="$L" {options}\n'
    )


CONTAINER_LOG = "/tmp/backendbench-pg/log/postgresql.csv"


class ContainerPostgres(TaskDatabase):
    """The sidecar container's database (the docker runtime's); the log is read through exec."""

    log_description = f"{CONTAINER_LOG} in the sidecar"

    def __init__(self) -> None:
        super().__init__()
        self.container: Any = None

    @property
    def candidate(self) -> DatabaseCredentials:
        return DatabaseCredentials(CONTAINER_HOST_ALIAS, CONTAINER_PORT, APP_USER, self.secrets.app_password, APP_DATABASE)

    def container_environment(self) -> dict[str, str]:
        """The sidecar's own environment (its setup SQL)."""
        return {"BB_SETUP_SQL": self.secrets.setup_sql(), "LANG": "C.UTF-8"}

    def read_log(self, offset: int) -> bytes:
        if self.container is None:
            return b""
        try:
            result = self.container.exec_run(["tail", "-c", f"+{offset + 1}", CONTAINER_LOG], stdout=True, stderr=False, demux=True)
        except Exception as err:  # docker.errors.APIError, requests errors: the engine's trouble
            raise HarnessError(f"could not read the sidecar's statement log: {err}") from err
        stdout = result.output[0] if isinstance(result.output, tuple) else result.output
        return bytes(stdout or b"")

    def server_log(self, tail: int = 40) -> str:
        if self.container is None:
            return ""
        try:
            return bytes(self.container.logs(tail=tail)).decode(errors="replace")
        except Exception:  # noqa: BLE001 - diagnostics only
            return ""


# --- the snapshot ---------------------------------------------------------------------------

_TABLES_SQL = """
SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable, c.column_default
FROM information_schema.columns c
JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE t.table_type = 'BASE TABLE' AND c.table_schema NOT IN ('pg_catalog', 'information_schema')
  AND c.table_schema NOT LIKE 'pg_toast%' AND c.table_schema NOT LIKE 'pg_temp%'
ORDER BY c.table_schema, c.table_name, c.ordinal_position
"""

_CONSTRAINTS_SQL = """
SELECT n.nspname, r.relname, con.contype,
       array(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.num ORDER BY k.ord)::text[],
       fn.nspname, fr.relname,
       array(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(num, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.num ORDER BY k.ord)::text[]
FROM pg_constraint con
JOIN pg_class r ON r.oid = con.conrelid JOIN pg_namespace n ON n.oid = r.relnamespace
LEFT JOIN pg_class fr ON fr.oid = con.confrelid LEFT JOIN pg_namespace fn ON fn.oid = fr.relnamespace
WHERE con.contype IN ('p', 'u', 'f') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY n.nspname, r.relname, con.conname
"""


def _table_key(schema: str, name: str) -> str:
    return name if schema == "public" else f"{schema}.{name}"


def jsonable(value: Any) -> Any:
    """A database value as JSON: numbers stay numbers, times become ISO strings."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return str(value)


def take_snapshot(connection: Any, rows: int = SNAPSHOT_ROWS) -> dict[str, Any]:
    """The JSON document DB cases are validated against.

    ``{"database": ..., "tables": {name: {schema, columns: {col: {type, udt, nullable, default}},
    primary_key, unique: [[cols]], foreign_keys: [{columns, references, ref_columns}], row_count,
    rows: [first rows by primary key]}}}``; tables outside ``public`` are keyed ``schema.name``.
    """
    from psycopg import sql
    from psycopg.rows import dict_row

    tables: dict[str, dict[str, Any]] = {}
    with connection.cursor() as cursor:
        for schema, name, column, data_type, udt, nullable, default in cursor.execute(_TABLES_SQL).fetchall():
            table = tables.setdefault(
                _table_key(schema, name),
                {"schema": schema, "name": name, "columns": {}, "primary_key": [], "unique": [], "foreign_keys": [], "row_count": 0, "rows": []},
            )
            table["columns"][column] = {"type": data_type, "udt": udt, "nullable": nullable == "YES", "default": default}
        for schema, name, kind, columns, ref_schema, ref_name, ref_columns in cursor.execute(_CONSTRAINTS_SQL).fetchall():
            owner = tables.get(_table_key(schema, name))
            if owner is None:
                continue
            if kind == "p":
                owner["primary_key"] = list(columns)
            elif kind == "u":
                owner["unique"].append(list(columns))
            else:
                owner["foreign_keys"].append({"columns": list(columns), "references": _table_key(ref_schema, ref_name), "ref_columns": list(ref_columns)})
    for table in tables.values():
        ident = sql.Identifier(table["schema"], table["name"])
        with connection.cursor() as cursor:
            table["row_count"] = int(cursor.execute(sql.SQL("SELECT count(*) FROM {}").format(ident)).fetchone()[0])
        order = sql.SQL(", ").join(sql.Identifier(c) for c in table["primary_key"]) if table["primary_key"] else sql.SQL("1")
        with connection.cursor(row_factory=dict_row) as cursor:
            fetched = cursor.execute(sql.SQL("SELECT * FROM {} ORDER BY {} LIMIT {}").format(ident, order, sql.Literal(rows))).fetchall()
        table["rows"] = [{k: jsonable(v) for k, v in row.items()} for row in fetched]
    connection.rollback()
    return {"database": APP_DATABASE, "tables": dict(sorted(tables.items()))}


__all__ = [
    "CapturedStatement",
    "ContainerPostgres",
    "DatabaseCredentials",
    "DatabaseSecrets",
    "LocalPostgres",
    "LogRecord",
    "StatementLog",
    "TaskDatabase",
    "database_of",
    "find_server_binaries",
    "parse_csvlog",
    "remove_stale_clusters",
    "server_unavailable_reason",
    "sidecar_script",
    "statements_of",
    "take_snapshot",
]
