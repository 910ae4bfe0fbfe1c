"""The ``db`` fixture: read-only SQL on the candidate's database for oracle items."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from ...errors import CandidateFailure, HarnessError, OracleError
from ...taskrun import registry_of
from ..providers.database import TaskDatabase, database_of
from ..providers.statement_log import statements_of
from .effects import statement_effects

WRITE_OPS = ("INSERT", "UPDATE", "DELETE")


class DatabaseQueryFailed(CandidateFailure):
    """An oracle query found the candidate's schema lacking a table or column the spec names."""


class RefusedRequestWrote(CandidateFailure):
    """A request the candidate refused still wrote to its database ("a failed request changes nothing")."""


@dataclass
class WriteWindow:
    """The candidate's writes between two points of an item (``DatabaseHandle.writes_during``).

    ``writes`` is filled when the window closes: one ``"<OP> <table>: <sql>"`` line for every
    INSERT, UPDATE or DELETE that took effect (a statement that failed or was rolled back is no
    write). Empty means the candidate's database was left as it was.
    """

    what: str
    writes: list[str] = field(default_factory=list)

    def assert_none(self) -> None:
        """Fail the item as the candidate's failure (never a harness error) if anything was written in the window."""
        __tracebackhide__ = True
        if self.writes:
            shown = "\n  ".join(self.writes[:10])
            more = f"\n  ... {len(self.writes) - 10} more" if len(self.writes) > 10 else ""
            raise RefusedRequestWrote(f"{self.what}: the request was refused, yet the candidate wrote to its database:", f"  {shown}{more}")


class DatabaseHandle:
    """Read-only SQL on the candidate's database for oracle items (the ``db`` fixture)."""

    def __init__(self, database: TaskDatabase) -> None:
        self._database = database
        self._connection: Any = None

    def query(self, sql: str, params: Any = None) -> list[dict[str, Any]]:
        """Rows as dicts, in a read-only transaction that is rolled back afterwards."""
        __tracebackhide__ = True
        from psycopg.rows import dict_row

        connection = self._connect()
        try:
            with connection.cursor(row_factory=dict_row) as cursor:
                cursor.execute(sql, params)
                return list(cursor.fetchall()) if cursor.description else []
        except Exception as err:
            raise self._failure(sql, err) from err
        finally:
            if not connection.closed:
                connection.rollback()

    def scalar(self, sql: str, params: Any = None) -> Any:
        """The first column of the first row (None when there is no row)."""
        __tracebackhide__ = True
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows and rows[0] else None

    def tables(self) -> list[str]:
        """The candidate's tables (``schema.name`` outside ``public``)."""
        rows = self.query(
            "SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' "
            "AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2"
        )
        return [r["table_name"] if r["table_schema"] == "public" else f"{r['table_schema']}.{r['table_name']}" for r in rows]

    @contextlib.contextmanager
    def writes_during(self, what: str) -> Iterator[WriteWindow]:
        """Collect what the candidate writes while the ``with`` block runs (the statement log).

        For "a request that fails changes nothing": send the refused request inside the block,
        then ``window.assert_none()``. The item's own database window is left whole.
        """
        log = self._database.statement_log
        window = WriteWindow(what)
        start = log.mark()
        yield window
        statements = statements_of(log.records_between(start, log.mark()))
        for statement in statements:
            if not statement.effective:
                continue
            for effect in statement_effects(statement.sql):
                if effect.op in WRITE_OPS:
                    window.writes.append(f"{effect.op} {effect.qualified or '?'}: {' '.join(statement.sql.split())[:200]}")

    def _connect(self) -> Any:
        if self._connection is None or self._connection.closed:
            try:
                self._connection = self._database.connect(read_only=True)
                self._connection.read_only = True
            except Exception as err:  # psycopg.OperationalError: our server is gone
                raise HarnessError(f"the db fixture could not connect to the task database: {err}") from err
        return self._connection

    @staticmethod
    def _failure(sql: str, err: Exception) -> BaseException:
        import psycopg

        text = " ".join(str(err).split())[:300]
        if isinstance(err, (psycopg.errors.UndefinedTable, psycopg.errors.UndefinedColumn)):
            return DatabaseQueryFailed(f"the candidate's database has no such table or column: {text}", f"query: {sql}")
        if isinstance(err, psycopg.OperationalError):
            return HarnessError(f"the task database failed a db fixture query: {text}")
        if isinstance(err, psycopg.Error):
            return OracleError(f"the oracle's db query failed: {text}\nquery: {sql}")
        return err

    def close(self) -> None:
        """Close the connection (fixture teardown)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None


@pytest.fixture
def db(request: pytest.FixtureRequest) -> Iterator[DatabaseHandle]:
    """Read-only queries against the task's database: ``db.query(sql, params)``, ``db.scalar(...)``."""
    run = registry_of(request.config).for_item(request.node)  # type: ignore[arg-type]
    if run is None:
        raise HarnessError("the 'db' fixture is only for oracle items of a benchmark task")
    if run.task.database != "postgres":
        raise OracleError(f"the 'db' fixture needs `database: postgres` in {run.task.task_yaml}")
    database = database_of(run.ensure_started())
    if database is None:
        raise HarnessError(f"the {run.task.id!r} service was started without its database (runtime bug)")
    handle = DatabaseHandle(database)
    try:
        yield handle
    finally:
        handle.close()
