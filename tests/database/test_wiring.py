"""Configuration of the database dimension that needs no server."""

from __future__ import annotations

import pytest

from pytest_backendbench.db.providers.credentials import DatabaseSecrets
from pytest_backendbench.db.providers.server import SERVER_SETTINGS
from pytest_backendbench.db.providers.sidecar import ContainerPostgres, sidecar_script
from pytest_backendbench.runtime.base import RuntimeOptions


def test_a_configured_postgres_image_is_used_as_is() -> None:
    from pytest_backendbench.runtime.docker import DockerRuntime

    runtime = DockerRuntime(RuntimeOptions(session_id="wiring", postgres_image="postgres:16"), client=object())
    assert runtime._postgres_image() == "postgres:16"


def test_the_sidecar_logs_every_statement_with_session_and_pid() -> None:
    script = sidecar_script()
    assert "-c log_statement='all'" in script and "-c log_line_prefix='%m [%c] %p %q%u@%d %a '" in script
    assert SERVER_SETTINGS["log_destination"] == "stderr,csvlog"
    database = ContainerPostgres()
    env = database.candidate_environment()
    assert env["DB_HOST"] == "postgres" and env["DB_PORT"] == "5432" and env["DATABASE_URL"].endswith("@postgres:5432/app")
    assert database.secrets.app_password in database.container_environment()["BB_SETUP_SQL"]


def test_every_task_gets_fresh_passwords() -> None:
    assert DatabaseSecrets().app_password != DatabaseSecrets().app_password


def test_the_postgres_image_option_falls_back_to_the_environment(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKENDBENCH_POSTGRES_IMAGE", "from-env:1")
    pytester.makeconftest(
        "from pytest_backendbench.db.checks.dbcheck import postgres_image_option\n"
        "def pytest_report_header(config):\n    return f'postgres image: {postgres_image_option(config)}'\n"
    )
    pytester.runpytest("-p", "pytest_backendbench.db.checks.dbcheck").stdout.fnmatch_lines(["postgres image: from-env:1"])
    pytester.runpytest("-p", "pytest_backendbench.db.checks.dbcheck", "--postgres-image=opt:2").stdout.fnmatch_lines(["postgres image: opt:2"])
