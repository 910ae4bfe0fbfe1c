"""The throwaway cluster against a real PostgreSQL: credentials, statement log, snapshot, cleanup."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from pytest_backendbench.db.checks.effects import judge, statement_effects
from pytest_backendbench.db.checks.fixture import DatabaseHandle, DatabaseQueryFailed, RefusedRequestWrote
from pytest_backendbench.db.providers.local_cluster import LocalPostgres, remove_stale_clusters
from pytest_backendbench.db.providers.server import HARNESS_USER
from pytest_backendbench.db.providers.statement_log import records_after_marker, statements_of

from .conftest import postgres_processes

pytestmark = [pytest.mark.postgres]


def test_the_candidate_gets_its_own_unprivileged_role_and_database(postgres: LocalPostgres) -> None:
    env = postgres.candidate_environment()
    assert env["DATABASE_URL"] == f"postgresql://app:{env['DB_PASSWORD']}@127.0.0.1:{env['DB_PORT']}/app"
    assert (env["DB_HOST"], env["DB_USERNAME"], env["DB_NAME"]) == ("127.0.0.1", "app", "app")
    with psycopg.connect(env["DATABASE_URL"]) as connection:
        assert connection.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
        connection.execute("CREATE TABLE mine (id int)")  # it owns its database
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(env["DATABASE_URL"].replace(env["DB_PASSWORD"], "wrong")).close()
    if os.geteuid() == 0:  # PostgreSQL refuses root: the server runs as an unprivileged OS user
        assert postgres.process is not None
        status = Path(f"/proc/{postgres.process.pid}/status").read_text()
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        assert uid != 0


def test_each_item_window_holds_exactly_the_candidates_statements(postgres: LocalPostgres) -> None:
    log = postgres.statement_log
    url = postgres.candidate.url
    with psycopg.connect(url) as c:
        c.execute('CREATE TABLE "Orders" (id serial PRIMARY KEY, note text)')
    log.read_until(log.mark())  # the window before the item is not the item's
    start = log.mark()
    with psycopg.connect(url, prepare_threshold=0) as c:  # named server-side prepared statements
        c.execute('INSERT INTO "Orders" (note) VALUES (%s) RETURNING id', ("a\nmulti-line note",))
        c.execute('SELECT * FROM "Orders" WHERE id = %s', (1,))
    with psycopg.connect(url) as c:
        with pytest.raises(psycopg.errors.UniqueViolation):
            c.execute('INSERT INTO "Orders" (id) VALUES (1)')
        c.rollback()
        c.execute('DELETE FROM "Orders"')
        c.rollback()
    with postgres.connect() as harness:  # the harness's own queries never count
        harness.execute('SELECT * FROM "Orders"')
    records = log.read_until(log.mark())
    window = records_after_marker(records, start)
    statements = [s for s in statements_of(window) if statement_effects(s.sql)]
    assert [(s.sql.split(" (")[0].split(" WHERE")[0], s.effective) for s in statements] == [
        ('INSERT INTO "Orders"', True),
        ('SELECT * FROM "Orders"', True),
        ('INSERT INTO "Orders"', False),
        ('DELETE FROM "Orders"', False),
    ]
    assert statements[0].parameters.startswith("$1 = 'a")
    verdict = judge(statements_of(window), [])
    assert {(e["op"], e["table"], e["count"]) for e in verdict.effects if e["op"] != "IGNORED"} == {("INSERT", "Orders", 1), ("SELECT", "Orders", 1)}
    assert all(r.user != HARNESS_USER for r in window if "Orders" in r.message)


def test_snapshot_lists_tables_columns_keys_and_first_rows(postgres: LocalPostgres) -> None:
    with psycopg.connect(postgres.candidate.url) as c:
        c.execute("CREATE SCHEMA shop")
        c.execute("CREATE TABLE shop.customers (id int PRIMARY KEY, email text NOT NULL UNIQUE)")
        c.execute('CREATE TABLE "Orders" (id serial PRIMARY KEY, customer_id int REFERENCES shop.customers(id), total numeric(8,2), at timestamptz)')
        c.execute("INSERT INTO shop.customers VALUES (1, 'a@b.co')")
        c.execute('INSERT INTO "Orders" (customer_id, total, at) SELECT 1, g * 1.5, now() FROM generate_series(1, 7) g')
    snapshot = postgres.snapshot()
    assert sorted(snapshot["tables"]) == ["Orders", "shop.customers"]
    orders = snapshot["tables"]["Orders"]
    assert orders["row_count"] == 7 and len(orders["rows"]) == 5
    assert [r["id"] for r in orders["rows"]] == [1, 2, 3, 4, 5]
    assert orders["rows"][0]["total"] == 1.5 and isinstance(orders["rows"][0]["at"], str)
    assert orders["columns"]["total"]["type"] == "numeric" and orders["columns"]["id"]["nullable"] is False
    assert orders["primary_key"] == ["id"]
    assert orders["foreign_keys"] == [{"columns": ["customer_id"], "references": "shop.customers", "ref_columns": ["id"]}]
    assert snapshot["tables"]["shop.customers"]["unique"] == [["email"]]


def test_snapshot_lists_unique_indexes_on_plain_columns_as_unique(postgres: LocalPostgres) -> None:
    with psycopg.connect(postgres.candidate.url) as c:
        c.execute("CREATE TABLE regs (id int PRIMARY KEY, event_id int, email text, code text, note text, extra text, UNIQUE (code))")
        c.execute("CREATE UNIQUE INDEX a_event_email ON regs (event_id, email)")
        c.execute("CREATE UNIQUE INDEX b_partial ON regs (note) WHERE note IS NOT NULL")
        c.execute("CREATE UNIQUE INDEX c_expression ON regs (event_id, lower(email))")
        c.execute("CREATE UNIQUE INDEX d_covering ON regs (extra) INCLUDE (note)")
        c.execute("CREATE INDEX e_plain ON regs (email)")
    # the constraint first, then unique indexes by name; partial and expression indexes do not
    # make their columns unique, and an INCLUDE column is not part of the key
    assert postgres.snapshot()["tables"]["regs"]["unique"] == [["code"], ["event_id", "email"], ["extra"]]


def test_the_db_fixture_handle_is_read_only(postgres: LocalPostgres) -> None:
    with psycopg.connect(postgres.candidate.url) as c:
        c.execute("CREATE TABLE t (id int)")
        c.execute("INSERT INTO t VALUES (1), (2)")
    handle = DatabaseHandle(postgres)
    try:
        assert handle.query("SELECT id FROM t WHERE id > %s ORDER BY id", (0,)) == [{"id": 1}, {"id": 2}]
        assert handle.scalar("SELECT count(*) FROM t") == 2
        assert handle.tables() == ["t"]
        with pytest.raises(Exception, match="read-only transaction"):
            handle.query("DELETE FROM t")
        with pytest.raises(DatabaseQueryFailed, match='relation "missing" does not exist'):
            handle.query("SELECT * FROM missing")
        assert handle.scalar("SELECT count(*) FROM t") == 2
    finally:
        handle.close()


def test_writes_during_sees_effective_writes_only_and_leaves_the_item_window_whole(postgres: LocalPostgres) -> None:
    log = postgres.statement_log
    url = postgres.candidate.url
    with psycopg.connect(url) as c:
        c.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text UNIQUE)")
    log.read_until(log.mark())
    item_start = log.mark()
    handle = DatabaseHandle(postgres)
    try:
        with handle.writes_during("a refused update") as refused, psycopg.connect(url) as c:
            c.execute("SELECT count(*) FROM notes")
            c.execute("INSERT INTO notes (body) VALUES ('kept back')")
            c.rollback()  # validated after writing, then rolled back: no write
        refused.assert_none()
        with handle.writes_during("a half-stored update") as half, psycopg.connect(url) as c:
            c.execute("INSERT INTO notes (body) VALUES ('stored')")
        assert [w.split(":")[0] for w in half.writes] == ["INSERT notes"]
        with pytest.raises(RefusedRequestWrote, match="a half-stored update: the request was refused, yet the candidate wrote"):
            half.assert_none()
    finally:
        handle.close()
    window = records_after_marker(log.read_until(log.mark()), item_start)  # the item's window still starts at its marker
    assert [s.effective for s in statements_of(window) if statement_effects(s.sql) and "notes" in s.sql] == [False, False, True]  # the SELECT shares the rolled-back transaction


def test_stop_leaves_no_process_and_no_folder(tmp_path: Path) -> None:
    database = LocalPostgres(Path(os.environ.get("BACKENDBENCH_CACHE", tmp_path)), "stop").start()
    folder = database.folder
    assert folder is not None and any(str(folder) in cmd for _, cmd in postgres_processes())
    database.stop()
    database.stop()  # idempotent
    assert not folder.exists()
    assert not any(str(folder) in cmd for _, cmd in postgres_processes())


def test_a_cluster_dies_with_a_killed_harness_and_is_reaped_later(tmp_path: Path) -> None:
    script = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from pytest_backendbench.db.providers.local_cluster import LocalPostgres\n"
        f"db = LocalPostgres(Path({str(tmp_path / 'cache')!r}), 'killed').start()\n"
        "print(db.folder, flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert folder.is_dir()
    proc.kill()  # SIGKILL: no cleanup code runs in the harness
    proc.wait()
    for _ in range(100):  # PR_SET_PDEATHSIG takes the postmaster down with it
        if not any(str(folder) in cmd for _, cmd in postgres_processes()):
            break
        time.sleep(0.1)
    assert not any(str(folder) in cmd for _, cmd in postgres_processes())
    assert remove_stale_clusters() >= 1
    assert not folder.exists()


def test_as_root_a_private_tmpdir_moves_the_cluster_where_the_server_user_can_reach_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 0700 TMPDIR (mktemp -d) is closed to the postgres OS user root hands the server to."""
    import tempfile

    from pytest_backendbench.db.providers.local_cluster import ServerUser, cluster_temp_root

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    myself = ServerUser("me", os.geteuid(), os.getegid())
    other = ServerUser("postgres", os.geteuid() + 1, os.getegid())
    assert cluster_temp_root(myself) == private  # no user switch: the temp folder as always
    assert cluster_temp_root(other) == Path("/tmp")  # /tmp is 1777 on every Linux this runs on
    private.chmod(0o755)
    if all(p.stat().st_mode & 0o001 for p in (private, *private.parents)):
        assert cluster_temp_root(other) == private
