"""The database dimension of oracle items: what each item made the candidate do to its database.

For every http and bdd item of a ``database: postgres`` task, the statements the candidate
sent between the item's setup and the end of its call are read from the server's statement
log (``database.StatementLog``), parsed with sqlglot into effects (INSERT/UPDATE/DELETE/SELECT
on a table, also inside CTEs, ``INSERT ... SELECT``, ``UPDATE ... FROM``, ``MERGE``, ``COPY``),
and checked against the item's expectations:

- ``@pytest.mark.db_effect("INSERT", table="registrations")`` on Python oracle items, and
  ``@db_effect:INSERT:registrations`` tags on Gherkin scenarios; ``op`` is INSERT, UPDATE,
  DELETE, SELECT or ANY (any of those four), ``table`` may be schema-qualified and quoted as in
  SQL (``'"Orders"'``), None means any table. Only statements that took effect count: one that
  raised an error or whose transaction was rolled back does not.
- ``db_valid`` in the report: True/False for an item with expectations; a Gherkin scenario
  of a postgres task without ``@db_effect`` tags implicitly expects ANY on any table (a UI
  whose actions never reach the database is not a full-stack app); None for everything else
  (no expectation, task without a database, item that never ran its call). "Passed with
  valid DB" is ``passed and db_valid is not False`` (metrics.py).
- ``db_effects``: one entry per (op, table) seen, with a count and an example statement, plus
  one ``expected: true`` entry per expectation with ``satisfied``.

A capture failure (the log cannot be read) makes an otherwise passing item an error: its
database verdict is unknown, and errors are never counted against the candidate.

The ``db`` fixture gives oracle items read-only SQL access to the candidate's database.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .database import CapturedStatement, LogRecord, TaskDatabase, database_of, statements_of
from ..errors import CandidateFailure, HarnessError, OracleError
from ..taskrun import ITEM_EXTRA_KEY, REGISTRY_KEY, registry_of

DATA_OPS = ("SELECT", "INSERT", "UPDATE", "DELETE")
MARKER_OPS = (*DATA_OPS, "ANY")
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema")
# statements worth parsing; the rest (BEGIN, SET, SAVEPOINT, ...) touch no table
_PARSED_KEYWORDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "MERGE", "COPY", "TRUNCATE", "CREATE", "ALTER", "DROP", "VALUES", "TABLE", "(")
_LEADING_NOISE = re.compile(r"^(?:\s+|--[^\n]*\n|/\*.*?\*/)*", re.DOTALL)
EXAMPLE_CHARS = 300
SECTION_STATEMENTS = 40

CAPTURE_KEY = pytest.StashKey["ItemCapture"]()


# --- effects --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Effect:
    """One operation a statement performs on one table (``schema`` None: unqualified)."""

    op: str
    table: str | None
    schema: str | None = None
    parsed: bool = True

    @property
    def qualified(self) -> str | None:
        """``schema.table`` or ``table``."""
        if self.table is None:
            return None
        return f"{self.schema}.{self.table}" if self.schema else self.table


def _identifier(node: Any) -> str:
    """A Postgres identifier as the server sees it: unquoted names fold to lower case."""
    from sqlglot import exp

    if isinstance(node, exp.Identifier):
        return str(node.this) if node.args.get("quoted") else str(node.this).lower()
    return str(node or "").lower()


def _table_ref(node: Any) -> tuple[str | None, str] | None:
    """(schema, table) of a Table node naming a relation, None for table functions."""
    from sqlglot import exp

    if isinstance(node, exp.Schema):
        node = node.this
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return None
    schema_node = node.args.get("db")
    schema = _identifier(schema_node) if schema_node is not None else None
    return schema or None, _identifier(node.this)


def _is_system(schema: str | None, table: str) -> bool:
    return schema in SYSTEM_SCHEMAS or (schema is None and table.startswith("pg_"))


def statement_effects(sql: str) -> list[Effect]:
    """The effects of one logged statement (several for a multi-statement string).

    Unparsable statements give one effect with ``table=None`` and ``parsed=False``, its op
    guessed from the first keyword, so they show up without matching table expectations.
    """
    import sqlglot
    from sqlglot.errors import SqlglotError

    head = _LEADING_NOISE.sub("", sql)[:10].upper()
    if not head.startswith(_PARSED_KEYWORDS):
        return []
    try:
        expressions = [e for e in sqlglot.parse(sql, read="postgres") if e is not None]
    except (SqlglotError, RecursionError, ValueError):
        keyword = head.split()[0] if head.split() else ""
        return [Effect(keyword if keyword in DATA_OPS else "UNKNOWN", None, None, parsed=False)]
    effects: list[Effect] = []
    for expression in expressions:
        effects.extend(_expression_effects(expression))
    return effects


def _expression_effects(expression: Any) -> list[Effect]:
    from sqlglot import exp

    effects: list[Effect] = []
    targets: set[int] = set()

    def add(op: str, node: Any) -> None:
        ref = _table_ref(node)
        if ref is None:
            return
        targets.add(id(node.this if isinstance(node, exp.Schema) else node))
        if not _is_system(*ref):
            effects.append(Effect(op, ref[1], ref[0]))

    if isinstance(expression, (exp.Create, exp.Alter, exp.Drop)):
        op = type(expression).__name__.upper()
        kind = str(expression.args.get("kind") or "").upper()
        if kind in ("TABLE", "VIEW", ""):
            for node in [expression.this, *(expression.args.get("tables") or []), *(expression.expressions if isinstance(expression, exp.Drop) else [])]:
                add(op, node)
        return effects  # DDL reads nothing; FOREIGN KEY ... REFERENCES t is no SELECT

    cte_names = {_identifier(cte.args["alias"].this) for cte in expression.find_all(exp.CTE) if cte.args.get("alias") is not None}
    for node in expression.walk():
        if isinstance(node, exp.Insert):
            add("INSERT", node.this)
            conflict = node.args.get("conflict")
            if conflict is not None and conflict.expressions:
                add("UPDATE", node.this)  # ON CONFLICT ... DO UPDATE may update
        elif isinstance(node, exp.Update):
            add("UPDATE", node.this)
        elif isinstance(node, exp.Delete):
            add("DELETE", node.this)
        elif isinstance(node, exp.Merge):
            whens = node.args.get("whens")
            for when in whens.expressions if whens is not None else []:
                then = when.args.get("then")
                if isinstance(then, exp.Insert):
                    add("INSERT", node.this)
                elif isinstance(then, exp.Update):
                    add("UPDATE", node.this)
                elif then is not None and "DELETE" in then.sql(dialect="postgres").upper():
                    add("DELETE", node.this)
        elif isinstance(node, exp.Copy):
            add("INSERT" if node.args.get("kind") else "SELECT", node.this)
        elif isinstance(node, exp.TruncateTable):
            for table in node.expressions:
                add("TRUNCATE", table)
    for table in expression.find_all(exp.Table):
        if id(table) in targets:
            continue
        ref = _table_ref(table)
        if ref is None or _is_system(*ref):
            continue
        schema, name = ref
        if schema is None and name in cte_names:
            continue
        effects.append(Effect("SELECT", name, schema))
    return effects


# --- expectations ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expectation:
    """One ``db_effect`` marker: an operation on a table (or any table) the item must cause."""

    op: str
    table: str | None = None
    schema: str | None = None
    implicit: bool = False

    @classmethod
    def from_marker(cls, marker: pytest.Mark) -> Expectation:
        """Parse ``db_effect(op, table=None)``; a malformed marker is the oracle's fault."""
        args = list(marker.args)
        table = marker.kwargs.get("table", args[1] if len(args) > 1 else None)
        unknown = set(marker.kwargs) - {"table"}
        if not args or not isinstance(args[0], str) or args[0].upper() not in MARKER_OPS or unknown or len(args) > 2:
            raise OracleError(f"db_effect{marker.args!r}: expected db_effect(OP, table=None) with OP one of {', '.join(MARKER_OPS)}")
        if table is not None and not isinstance(table, str):
            raise OracleError(f"db_effect: table must be a string such as 'orders' or 'shop.orders', got {table!r}")
        schema, name = parse_table_name(table) if table else (None, None)
        return cls(args[0].upper(), name, schema)

    def matches(self, effect: Effect) -> bool:
        """Whether an observed effect satisfies this expectation."""
        if self.op == "ANY":
            if effect.op not in DATA_OPS:
                return False
        elif effect.op != self.op:
            return False
        if self.table is None:
            return effect.table is not None or self.op == "ANY" and not effect.parsed and effect.op in DATA_OPS
        if effect.table != self.table:
            return False
        return self.schema is None or (effect.schema or "public") == self.schema

    def describe(self) -> str:
        """``INSERT on registrations`` / ``ANY on any table``."""
        where = f"{self.schema}.{self.table}" if self.schema else self.table
        return f"{self.op} on {where or 'any table'}"


def parse_table_name(text: str) -> tuple[str | None, str]:
    """``orders`` / ``shop.orders`` / ``"Orders"`` -> (schema, table), folded as SQL folds them."""
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        table = exp.to_table(text, dialect="postgres")
    except (SqlglotError, ValueError) as err:
        raise OracleError(f"db_effect: {text!r} is not a table name") from err
    ref = _table_ref(table)
    if ref is None:
        raise OracleError(f"db_effect: {text!r} is not a table name")
    return ref


def tag_expectations(tags: tuple[str, ...] | list[str]) -> list[pytest.MarkDecorator]:
    """``@db_effect:INSERT:registrations`` Gherkin tags as ``db_effect`` markers."""
    markers = []
    for tag in tags:
        name, _, rest = tag.partition(":")
        if name != "db_effect":
            continue
        op, _, table = rest.partition(":")
        markers.append(pytest.mark.db_effect(op, table=table or None))
    return markers


@dataclass
class Verdict:
    """What an item's statements showed against its expectations."""

    effects: list[dict[str, Any]]
    valid: bool | None
    problems: list[str]


def judge(statements: list[CapturedStatement], expectations: list[Expectation]) -> Verdict:
    """Aggregate the effective statements' effects and check every expectation."""
    observed: dict[tuple[str, str | None], dict[str, Any]] = {}
    effective: list[Effect] = []
    ignored = 0
    for statement in statements:
        effects = statement_effects(statement.sql)
        if not statement.effective:
            ignored += bool(effects)
            continue
        for effect in effects:
            effective.append(effect)
            entry = observed.setdefault(
                (effect.op, effect.qualified),
                {"op": effect.op, "table": effect.qualified, "count": 0, "example": statement.sql.strip()[:EXAMPLE_CHARS]},
            )
            entry["count"] += 1
            if not effect.parsed:
                entry["parsed"] = False
    entries = list(observed.values())
    problems = []
    for expectation in expectations:
        count = sum(1 for effect in effective if expectation.matches(effect))
        entries.append({"op": expectation.op, "table": f"{expectation.schema}.{expectation.table}" if expectation.schema else expectation.table,
                        "expected": True, "implicit": expectation.implicit, "count": count, "satisfied": count > 0})
        if count == 0:
            seen = ", ".join(f"{e['op']} {e['table'] or '?'} x{e['count']}" for e in observed.values()) or "no effective statements"
            problems.append(f"expected {expectation.describe()}; the candidate's database saw: {seen}")
    if ignored:
        entries.append({"op": "IGNORED", "table": None, "count": ignored, "note": "statements that failed or were rolled back"})
    return Verdict(entries, (not problems) if expectations else None, problems)


# --- wiring: options and collection -------------------------------------------------------

POSTGRES_IMAGE_ENV = "BACKENDBENCH_POSTGRES_IMAGE"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("backendbench")
    group.addoption(
        "--postgres-image", default=None, metavar="IMAGE",
        help="docker runtime: image of the PostgreSQL sidecar (default: built from the package's Dockerfile on --base-image)",
    )
    parser.addini("backendbench_postgres_image", "default for --postgres-image", default="")


def postgres_image_option(config: pytest.Config) -> str | None:
    """--postgres-image, else the ini value, else $BACKENDBENCH_POSTGRES_IMAGE, else None."""
    try:
        ini = str(config.getini("backendbench_postgres_image") or "")
    except ValueError:  # the option was not declared (plugin registered late)
        ini = ""
    return config.getoption("postgres_image", None) or ini or os.environ.get(POSTGRES_IMAGE_ENV) or None


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """``oracles/<task>/db/*.yaml`` become database cases (collect/db_cases.py)."""
    from .db_cases import collect_db_case

    return collect_db_case(file_path, parent)


# --- per-item capture -----------------------------------------------------------------------


@dataclass
class ItemCapture:
    """The window on the statement log opened at an item's setup."""

    database: TaskDatabase
    start_token: str


def _database_for(item: pytest.Item) -> TaskDatabase | None:
    kind = getattr(item, "backendbench_kind", "http")
    if kind not in ("http", "bdd"):
        return None
    registry = item.config.stash.get(REGISTRY_KEY, None)
    if registry is None:
        return None
    run = registry.for_item(item)
    if run is None or run.task.database != "postgres" or run.service is None:
        return None
    return database_of(run.service)


def expectations_of(item: pytest.Item) -> list[Expectation]:
    """The item's db_effect markers; a bdd item without any expects ANY on any table."""
    expectations = [Expectation.from_marker(m) for m in item.iter_markers("db_effect")]
    if not expectations and getattr(item, "backendbench_kind", "http") == "bdd":
        expectations = [Expectation("ANY", implicit=True)]
    return expectations


def finish_capture(item: pytest.Item, capture: ItemCapture) -> Verdict:
    """Read the item's statements, judge them, and record the verdict for the report."""
    log = capture.database.statement_log
    records = log.read_until(log.mark())
    window = records_after_marker(records, capture.start_token)
    statements = statements_of(window)
    verdict = judge(statements, expectations_of(item))
    previous: dict[str, Any] | None = item.stash.get(ITEM_EXTRA_KEY, None)
    extra: dict[str, Any] = dict(previous or {})
    extra.update(db_effects=verdict.effects, db_valid=verdict.valid)
    if verdict.problems:
        extra["db_problems"] = verdict.problems
    item.stash[ITEM_EXTRA_KEY] = extra
    item.add_report_section("call", "database", _section(statements, verdict))
    return verdict


def records_after_marker(records: list[LogRecord], token: str) -> list[LogRecord]:
    for index, record in enumerate(records):
        if token in record.message:
            return records[index + 1:]
    return records


def _section(statements: list[CapturedStatement], verdict: Verdict) -> str:
    lines = [f"db_valid: {verdict.valid}"]
    lines += [f"problem: {p}" for p in verdict.problems]
    lines.append(f"statements ({len(statements)}):")
    for statement in statements[:SECTION_STATEMENTS]:
        flag = "" if statement.effective else (" [failed]" if statement.failed else " [rolled back]")
        text = " ".join(statement.sql.split())[:200]
        params = f"  -- {statement.parameters[:120]}" if statement.parameters else ""
        lines.append(f"  [{statement.session}]{flag} {text}{params}")
    if len(statements) > SECTION_STATEMENTS:
        lines.append(f"  ... {len(statements) - SECTION_STATEMENTS} more")
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Open the item's window on the statement log before its fixtures run."""
    database = _database_for(item)
    if database is None:
        return
    expectations_of(item)  # a malformed db_effect marker errors the item before it runs
    item.stash[CAPTURE_KEY] = ItemCapture(database, database.statement_log.mark())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    """Close the window when the call ends, whether it passed or failed."""
    __tracebackhide__ = True
    capture = item.stash.get(CAPTURE_KEY, None)
    try:
        result = yield
    except (KeyboardInterrupt, SystemExit):
        raise
    except HarnessError:
        raise  # the oracle or the harness failed: the item is an error, its database verdict unknown
    except BaseException:
        if capture is not None:
            try:
                finish_capture(item, capture)
            except HarnessError as err:
                item.add_report_section("call", "database", f"statement capture failed: {err}")
        raise
    if capture is not None:
        finish_capture(item, capture)  # a HarnessError here makes the item an error
    return result


def pytest_itemcollected(item: pytest.Item) -> None:
    """Gherkin ``@db_effect:OP:table`` tags become db_effect markers."""
    spec = getattr(item, "spec", None)
    for marker in tag_expectations(tuple(getattr(spec, "tags", ()) or ())):
        item.add_marker(marker)


# --- terminal summary -----------------------------------------------------------------------


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """List the items whose db_effect expectations did not hold (they passed or failed as usual)."""
    problems = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            data = getattr(report, "backendbench", None)
            if getattr(report, "when", None) == "teardown" and isinstance(data, dict) and data.get("db_valid") is False:
                problems.append((report.nodeid, "; ".join(data.get("db_problems", [])) or "db_effect expectations not met"))
    if not problems:
        return
    terminalreporter.section("backendbench database checks")
    terminalreporter.write_line(f"{len(problems)} item(s) did not cause the expected database effects (they count as failed 'w/ valid DB'):")
    for nodeid, problem in problems[:20]:
        terminalreporter.write_line(f"  {nodeid}: {problem}")
    if len(problems) > 20:
        terminalreporter.write_line(f"  ... {len(problems) - 20} more in report.json (db_valid: false)")


# --- the db fixture -------------------------------------------------------------------------


class DatabaseQueryFailed(CandidateFailure):
    """An oracle query found the candidate's schema lacking a table or column the spec names."""


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
