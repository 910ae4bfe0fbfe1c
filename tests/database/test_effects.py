"""Statement effects (sqlglot), expectations and log parsing, without a server."""

from __future__ import annotations

import csv
import io

import pytest

from pytest_backendbench.db.checks.effects import Effect, Expectation, judge, statement_effects, tag_expectations
from pytest_backendbench.db.providers.statement_log import CapturedStatement, parse_csvlog, statements_of
from pytest_backendbench.errors import OracleError


def effects(sql: str) -> list[tuple[str, str | None]]:
    return [(e.op, e.qualified) for e in statement_effects(sql)]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ('INSERT INTO orders ("Name") VALUES ($1) RETURNING id', [("INSERT", "orders")]),
        ("INSERT INTO projects (slug,name) VALUES ($1,$2) RETURNING id", [("INSERT", "projects")]),  # psycopg 3's %s,%s
        ("UPDATE t SET a=$1,b='$2,x' WHERE id=$3", [("UPDATE", "t")]),
        ('insert into "Orders" values (1)', [("INSERT", "Orders")]),
        ("INSERT INTO Orders VALUES (1)", [("INSERT", "orders")]),
        ('UPDATE shop."Line Items" SET qty = 2 WHERE id = $1', [("UPDATE", "shop.Line Items")]),
        ("DELETE FROM public.orders WHERE id = $1", [("DELETE", "public.orders")]),
        (
            'WITH new AS (INSERT INTO shop."Orders" (a) VALUES (1) RETURNING id) SELECT * FROM new JOIN customers c ON true',
            [("INSERT", "shop.Orders"), ("SELECT", "customers")],
        ),
        ("INSERT INTO archive SELECT * FROM orders WHERE done", [("INSERT", "archive"), ("SELECT", "orders")]),
        ("UPDATE orders o SET total = i.s FROM (SELECT order_id, sum(x) s FROM items GROUP BY 1) i WHERE i.order_id = o.id",
         [("UPDATE", "orders"), ("SELECT", "items")]),
        ("DELETE FROM orders USING customers WHERE customers.id = orders.cid", [("DELETE", "orders"), ("SELECT", "customers")]),
        ("INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET a = EXCLUDED.a", [("INSERT", "t"), ("UPDATE", "t")]),
        ("INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING", [("INSERT", "t")]),
        ("MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET a = s.a WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id)",
         [("UPDATE", "t"), ("INSERT", "t"), ("SELECT", "s")]),
        ("COPY orders FROM STDIN", [("INSERT", "orders")]),
        ("COPY orders TO STDOUT", [("SELECT", "orders")]),
        ("SELECT * FROM orders FOR UPDATE", [("SELECT", "orders")]),
        ("/* ORM */ SELECT o.id FROM orders o WHERE o.id IN (SELECT order_id FROM items)", [("SELECT", "orders"), ("SELECT", "items")]),
        ("INSERT INTO x VALUES (1); DELETE FROM y", [("INSERT", "x"), ("DELETE", "y")]),
        ("CREATE TABLE IF NOT EXISTS r (id int REFERENCES events(id))", [("CREATE", "r")]),
        ("TRUNCATE orders", [("TRUNCATE", "orders")]),
    ],
)
def test_statement_effects(sql: str, expected: list[tuple[str, str]]) -> None:
    assert sorted(effects(sql)) == sorted(expected)


@pytest.mark.parametrize(
    "sql",
    ["BEGIN", "COMMIT", "SET search_path TO public", "SELECT 1", "SELECT * FROM generate_series(1, 3)",
     "SELECT relname FROM pg_catalog.pg_class", "SELECT * FROM pg_tables", "SELECT * FROM information_schema.tables",
     "SAVEPOINT s1", "DISCARD ALL"],
)
def test_statements_without_table_effects(sql: str) -> None:
    assert statement_effects(sql) == []


def test_an_unparsable_statement_is_kept_without_a_table() -> None:
    assert statement_effects("INSERT INTO ((( broken") == [Effect("INSERT", None, None, parsed=False)]


def expectation(*args: object, **kwargs: object) -> Expectation:
    return Expectation.from_marker(pytest.mark.db_effect(*args, **kwargs).mark)


def test_expectations_fold_names_like_sql() -> None:
    assert expectation("insert", table="Orders") == Expectation("INSERT", "orders", None)
    assert expectation("INSERT", table='"Orders"') == Expectation("INSERT", "Orders", None)
    assert expectation("DELETE", "shop.orders") == Expectation("DELETE", "orders", "shop")
    assert expectation("ANY") == Expectation("ANY", None, None)


def test_expectation_matching() -> None:
    insert = Effect("INSERT", "orders", None)
    assert expectation("INSERT", table="orders").matches(insert)
    assert expectation("INSERT", table="public.orders").matches(insert)
    assert not expectation("INSERT", table="shop.orders").matches(insert)
    assert not expectation("UPDATE", table="orders").matches(insert)
    assert expectation("ANY").matches(insert)
    assert not expectation("ANY").matches(Effect("CREATE", "orders"))
    assert not expectation("INSERT", table="orders").matches(Effect("INSERT", None, None, parsed=False))


@pytest.mark.parametrize("args", [(), ("UPSERT",), (5,)])
def test_malformed_markers_are_oracle_errors(args: tuple[object, ...]) -> None:
    with pytest.raises(OracleError, match="expected db_effect"):
        expectation(*args)


def test_gherkin_tags_become_markers() -> None:
    markers = tag_expectations(("R1", "db_effect:INSERT:registrations", "db_effect:ANY", "category:state"))
    assert [(m.mark.args, m.mark.kwargs) for m in markers] == [(("INSERT",), {"table": "registrations"}), (("ANY",), {"table": None})]


def test_db_none_says_a_scenario_needs_no_database_work(pytester: pytest.Pytester) -> None:
    assert [m.mark.args for m in tag_expectations(("R1", "db:none"))] == [("NONE",)]
    pytester.makepyfile(
        """
        import pytest
        from pytest_backendbench.db.checks.dbcheck import expectations_of

        @pytest.mark.db_effect("NONE")
        def test_needs_nothing(request):
            assert expectations_of(request.node) == []

        @pytest.mark.db_effect("NONE")
        @pytest.mark.db_effect("INSERT")
        def test_contradiction(request):
            with pytest.raises(Exception, match="says no database work"):
                expectations_of(request.node)
        """
    )
    pytester.runpytest_inprocess("-p", "no:cacheprovider", "-W", "ignore::pytest.PytestUnknownMarkWarning").assert_outcomes(passed=2)


def test_judge_counts_only_statements_that_took_effect() -> None:
    statements = [
        CapturedStatement("INSERT INTO orders VALUES ($1)", "s1", "1", "t", failed=True),
        CapturedStatement("DELETE FROM orders", "s1", "1", "t", rolled_back=True),
        CapturedStatement("SELECT * FROM orders", "s1", "1", "t"),
    ]
    verdict = judge(statements, [expectation("INSERT", table="orders"), expectation("SELECT", table="orders")])
    assert verdict.valid is False
    assert verdict.problems == ["expected INSERT on orders; the candidate's database saw: SELECT orders x1"]
    expected = [e for e in verdict.effects if e.get("expected")]
    assert [(e["op"], e["satisfied"]) for e in expected] == [("INSERT", False), ("SELECT", True)]
    assert {"op": "IGNORED", "table": None, "count": 2, "note": "statements that failed or were rolled back"} in verdict.effects
    assert judge(statements, []).valid is None


def csvlog(*rows: dict[str, str]) -> bytes:
    """CSV log lines in PostgreSQL's column order (26 columns)."""
    columns = ["log_time", "user", "db", "pid", "from", "session", "line", "tag", "start", "vxid", "xid", "severity", "state",
               "message", "detail", "hint", "iq", "iqp", "context", "query", "qp", "location", "app", "backend", "leader", "qid"]
    out = io.StringIO()
    writer = csv.writer(out)
    for number, row in enumerate(rows, 1):
        values = {"user": "app", "db": "app", "pid": "7", "session": "s1", "line": str(number), "severity": "LOG", "vxid": "3/1", **row}
        writer.writerow([values.get(c, "") for c in columns])
    return out.getvalue().encode()


def test_statements_of_reads_parameters_prepared_statements_errors_and_rollbacks() -> None:
    data = csvlog(
        {"message": "statement: SELECT 'bb-mark-x'", "user": "backendbench"},
        {"message": "execute <unnamed>: INSERT INTO orders (a)\nVALUES ($1)", "detail": "parameters: $1 = 'x'"},
        {"message": "statement: EXECUTE ins(1)", "detail": "prepare: PREPARE ins(int) AS INSERT INTO items VALUES ($1)", "vxid": "3/2"},
        {"message": "statement: BEGIN", "vxid": "3/3"},
        {"message": "execute _pg3_0: INSERT INTO nope VALUES (1)", "vxid": "3/3"},
        {"message": 'relation "nope" does not exist', "severity": "ERROR", "vxid": "3/3"},
        {"message": "statement: ROLLBACK", "vxid": "3/0"},
    )
    statements = statements_of(parse_csvlog(data))
    assert [(s.sql, s.effective) for s in statements] == [
        ("INSERT INTO orders (a)\nVALUES ($1)", True),
        ("INSERT INTO items VALUES ($1)", True),
        ("BEGIN", False),
        ("INSERT INTO nope VALUES (1)", False),
        ("ROLLBACK", False),
    ]
    assert statements[0].parameters == "$1 = 'x'"
    assert statements[3].failed
