"""A task's PostgreSQL as the harness sees it, whoever provides the server.

A task with ``database: postgres`` gets its own server, created when the service boots and
removed when it stops. ``TaskDatabase`` is the interface every provider implements:

- ``local_cluster.LocalPostgres`` (process runtime): a throwaway cluster started from the
  PostgreSQL binaries installed on the machine;
- ``sidecar.ContainerPostgres`` (docker runtime): a sidecar container on the task's network.

A provider starts the server with ``server.SERVER_SETTINGS`` (``log_statement=all`` into a CSV
log) and answers ``candidate`` (what the candidate is told), ``harness_host/harness_port``
(where the harness reaches it), ``read_log`` and ``server_log``. The rest (the harness's
connection, the per-item ``StatementLog`` window, the snapshot) is shared here. Another local
provider (say, an embedded server from a wheel) subclasses ``TaskDatabase`` and registers in
``providers.LOCAL_PROVIDERS``.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from ...errors import HarnessError
from .credentials import DatabaseCredentials, DatabaseSecrets
from .server import APP_DATABASE, HARNESS_APPLICATION, HARNESS_USER, MARKER_APPLICATION
from .statement_log import LogRecord, parse_csvlog, records_after_marker

LOG_WAIT_S = 10.0


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
        chunk = self._through(token, timeout_s)
        self.offset += len(chunk)
        return parse_csvlog(chunk)

    def records_between(self, start: str, end: str, timeout_s: float = LOG_WAIT_S) -> list[LogRecord]:
        """Records after marker ``start`` up to and including marker ``end``, without moving the read offset.

        For a window inside an item (``DatabaseHandle.writes_during``): the item's own window,
        read by ``read_until`` when it ends, must still find its start marker afterwards.
        """
        return records_after_marker(parse_csvlog(self._through(end, timeout_s)), start)

    def _through(self, token: str, timeout_s: float) -> bytes:
        """The log from the read offset through the whole line of marker ``token``, once it is written."""
        needle = token.encode()
        deadline = time.monotonic() + timeout_s
        while True:
            data = self.database.read_log(self.offset)
            position = data.find(needle)
            if position >= 0:
                end = data.find(b"\n", position)
                if end >= 0:
                    return data[: end + 1]
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
            from .snapshot import take_snapshot

            return take_snapshot(connection)

    def start(self) -> TaskDatabase:
        """Create and start the server and wait until it accepts logins; on failure remove
        what was made and raise ``HarnessError`` (a server that fails is never the candidate's fault)."""
        raise NotImplementedError(f"{type(self).__name__} is started by its runtime")

    def stop(self) -> None:
        """Stop the server and remove everything it left; idempotent. Providers extend it and
        return only when no server process is left."""
        if self._statement_log is not None:
            self._statement_log.close()


def database_of(service: object) -> TaskDatabase | None:
    """The TaskDatabase a running service was started with (None for ``database: none``)."""
    database = getattr(service, "database", None)
    return database if isinstance(database, TaskDatabase) else None


class PostgresReady:
    """A wait strategy (host/wait.py): ready when ``connect()`` logs in."""

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

