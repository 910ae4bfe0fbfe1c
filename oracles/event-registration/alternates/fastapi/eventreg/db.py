"""A small connection pool and the schema."""
import logging
import queue
import threading
import time
from contextlib import contextmanager

import psycopg

log = logging.getLogger("eventreg.db")

DDL = [
    """CREATE TABLE IF NOT EXISTS events (
           id serial PRIMARY KEY,
           title varchar(120) NOT NULL,
           starts_at timestamptz NOT NULL,
           capacity integer NOT NULL,
           created_at timestamptz NOT NULL DEFAULT now()
       )""",
    """CREATE TABLE IF NOT EXISTS registrations (
           id serial PRIMARY KEY,
           event_id integer NOT NULL REFERENCES events(id),
           name varchar(100) NOT NULL,
           email text NOT NULL,
           created_at timestamptz NOT NULL DEFAULT now(),
           UNIQUE (event_id, email)
       )""",
    "CREATE INDEX IF NOT EXISTS registrations_event_idx ON registrations (event_id, id)",
]


class Pool:
    def __init__(self, conninfo: str, size: int = 8):
        self.conninfo = conninfo
        self.size = size
        self._idle: "queue.LifoQueue[psycopg.Connection]" = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)

    def _new(self) -> psycopg.Connection:
        conn = psycopg.connect(self.conninfo, connect_timeout=10, autocommit=True,
                               options="-c timezone=UTC")
        return conn

    @contextmanager
    def connection(self):
        """Yield a connection; the block runs in one transaction (commit on success)."""
        self._slots.acquire()
        conn = None
        try:
            try:
                conn = self._idle.get_nowait()
                if conn.closed or conn.broken:
                    conn = None
            except queue.Empty:
                pass
            if conn is None:
                conn = self._new()
            try:
                with conn.transaction():
                    yield conn
            finally:
                if conn.closed or conn.broken or conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                    try:
                        conn.close()
                    except Exception:
                        pass
                else:
                    self._idle.put(conn)
        finally:
            self._slots.release()

    def close(self):
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


def wait_and_migrate(conninfo: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(conninfo, connect_timeout=5) as conn:
                with conn.transaction():
                    conn.execute("SELECT pg_advisory_xact_lock(4242001)")
                    for stmt in DDL:
                        conn.execute(stmt)
            return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise
            log.warning("database not ready yet: %s", exc)
            time.sleep(1)
