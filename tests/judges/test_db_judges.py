"""The database judge and the DB-log check over a real PostgreSQL (the process runtime's cluster)."""

from __future__ import annotations

import json
import os
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest

from pytest_backendbench.db.providers.local_cluster import LocalPostgres, server_unavailable_reason
from pytest_backendbench.judges.cases import JudgeCase
from pytest_backendbench.judges.db_judge import fullstack_schema, judge_database
from pytest_backendbench.judges.db_log import interaction_confirmed, statements_during
from pytest_backendbench.judges.model import JudgeServer, OpenAIJudgeModel
from pytest_backendbench.judges.verdicts import Verdict

from ..database.conftest import postgres  # noqa: F401 - the started throwaway cluster, re-exported
from .scripted_model import ScriptedModelServer

pytestmark = [pytest.mark.postgres]


@pytest.fixture(autouse=True)
def _needs_postgres() -> None:
    reason = server_unavailable_reason()
    if reason and os.environ.get("CI"):
        pytest.fail(f"CI is set and this test cannot run: {reason}", pytrace=False)


def test_the_database_judge_and_the_db_log_check_read_the_real_server(postgres: LocalPostgres) -> None:  # noqa: F811 - the fixture
    with psycopg.connect(postgres.candidate.url) as c:
        c.execute("CREATE TABLE registrations (id serial PRIMARY KEY, event text NOT NULL, email text NOT NULL)")
        for n in range(7):
            c.execute("INSERT INTO registrations (event, email) VALUES (%s, %s)", ("PyCon", f"u{n}@example.org"))
    run: Any = SimpleNamespace(task=SimpleNamespace(database="postgres"), service=SimpleNamespace(database=postgres), key="event-registration")
    case = JudgeCase("BE-1", "backend", "Register for PyCon.", "The registration is stored.", "R1", db_interaction="a row is inserted into registrations")
    with statements_during(run) as window, psycopg.connect(postgres.candidate.url) as c:
        c.execute("INSERT INTO registrations (event, email) VALUES (%s, %s)", ("PyCon", "ada@example.org"))
    assert window.available and any(s.startswith("INSERT INTO registrations") for s in window.statements)

    script = {"db-interaction": ["The INSERT is there.\nDatabase Interaction Correctness: YES"], "db-verdict": ['It has one.\n```json\n{"answer": "Yes"}\n```']}
    with ScriptedModelServer(script, keyed_by="order") as server:
        model = OpenAIJudgeModel(JudgeServer("m", server.base_url))
        assert interaction_confirmed(model, case, window.statements) is True
        snapshot = postgres.snapshot()
        outcome = judge_database(model, JudgeCase("DB-1", "database", "registrations with the event and the attendee's e-mail", "a table of registrations", "R1"), snapshot)
    assert outcome.verdict is Verdict.YES
    asked_log, asked_db = (r.messages[0]["content"] for r in server.requests)
    assert "INSERT INTO registrations (event, email) VALUES ($1, $2)" in asked_log
    schema = fullstack_schema(snapshot)
    assert schema["registrations"]["columns"] == ["id", "event", "email"] and len(schema["registrations"]["rows"]) == 5  # FullStack-Bench's first five
    assert json.dumps(schema, indent=1, ensure_ascii=False) in asked_db
