"""The effects judge: what statements did to which tables, checked against an item's expectations.

``statement_effects`` parses one logged statement with sqlglot into effects (INSERT/UPDATE/
DELETE/SELECT on a table, also inside CTEs, ``INSERT ... SELECT``, ``UPDATE ... FROM``,
``MERGE``, ``COPY``); ``Expectation`` is one ``db_effect`` marker; ``judge`` aggregates the
effective statements and says which expectations held. Pure: no server, no pytest run.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

import pytest

from ...errors import OracleError
from ..providers.server import is_system_schema
from ..providers.statement_log import CapturedStatement

DATA_OPS = ("SELECT", "INSERT", "UPDATE", "DELETE")
MARKER_OPS = (*DATA_OPS, "ANY")
# statements worth parsing; the rest (BEGIN, SET, SAVEPOINT, ...) touch no table
_PARSED_KEYWORDS = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH", "MERGE", "COPY", "TRUNCATE", "CREATE", "ALTER", "DROP", "VALUES", "TABLE", "(")
_LEADING_NOISE = re.compile(r"^(?:\s+|--[^\n]*\n|/\*.*?\*/)*", re.DOTALL)
_PLACEHOLDER = re.compile(r"\$(\d+)")
"""A positional parameter as the server logs it."""
EXAMPLE_CHARS = 300
STATEMENT_CACHE_SIZE = 4096
"""Distinct statement texts whose parsed effects are kept, least recently used dropped first."""


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
    return is_system_schema(schema) or (schema is None and table.startswith("pg_"))


def statement_effects(sql: str) -> list[Effect]:
    """The effects of one logged statement (several for a multi-statement string).

    Unparsable statements give one effect with ``table=None`` and ``parsed=False``, its op
    guessed from the first keyword, so they show up without matching table expectations.
    """
    return list(_parsed_effects(sql))


@functools.lru_cache(maxsize=STATEMENT_CACHE_SIZE)
def _parsed_effects(sql: str) -> tuple[Effect, ...]:
    """A service sends the same statement texts again and again (bound parameters, an ORM's
    queries): parsing dominates judging the log, and the effects of a text never change."""
    import sqlglot
    from sqlglot.errors import SqlglotError

    head = _LEADING_NOISE.sub("", sql)[:10].upper()
    if not head.startswith(_PARSED_KEYWORDS):
        return ()
    try:
        # sqlglot cannot parse "$1,$2" (psycopg 3 sends %s,%s that way); a space after each
        # placeholder changes nothing else (a dollar-quote tag cannot start with a digit)
        expressions = [e for e in sqlglot.parse(_PLACEHOLDER.sub(r"$\1 ", sql), read="postgres") if e is not None]
    except (SqlglotError, RecursionError, ValueError):
        keyword = head.split()[0] if head.split() else ""
        return (Effect(keyword if keyword in DATA_OPS else "UNKNOWN", None, None, parsed=False),)
    return tuple(effect for expression in expressions for effect in _expression_effects(expression))


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


NO_DB_WORK = "NONE"
"""``db_effect("NONE")`` / ``@db:none``: the item needs no database work, so it has no expectation
(FullStack-Bench counts such a case as valid DB) and a scenario gets no implicit ANY."""


def tag_expectations(tags: tuple[str, ...] | list[str]) -> list[pytest.MarkDecorator]:
    """``@db_effect:INSERT:registrations`` (and ``@db:none``) Gherkin tags as ``db_effect`` markers."""
    markers = []
    for tag in tags:
        name, _, rest = tag.partition(":")
        if name == "db" and rest.lower() == "none":  # @db:none: the scenario needs no database work
            markers.append(pytest.mark.db_effect(NO_DB_WORK))
            continue
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
