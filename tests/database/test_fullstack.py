"""The event-registration task end to end: reference, fake backend and no-tables variants.

Each run is a real evaluation (process runtime, a real PostgreSQL cluster, Chromium for the
Gherkin scenarios); the variants come from oracles/event-registration/mutants.yaml.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_backendbench.report.json_report import validate_report

from ..conftest import read_report
from .conftest import RUN, TASK, clusters_of, materialize, postgres_processes

pytestmark = [pytest.mark.postgres, pytest.mark.browser, pytest.mark.slow]


def evaluate(pytester: pytest.Pytester, candidate: Path, out: str, *extra: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest(f"--candidate={candidate}", f"--bench-task={TASK}", f"--bench-report-dir={out}", *RUN, *extra)
    report = read_report(pytester.path / out)
    validate_report(report)
    return result, report


def items_by_name(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["nodeid"].split("::")[-1]: item for item in report["tasks"][0]["items"]}


def test_reference_passes_everything_with_a_valid_database(pytester: pytest.Pytester, er_bench: Path) -> None:
    result, report = evaluate(pytester, er_bench / "oracles" / TASK / "reference", "ref")
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) >= 63 and not outcomes.get("failed") and not outcomes.get("errors"), outcomes
    summary = report["summary"]
    for key in ("test_acc", "fe_acc", "fe_acc_valid_db", "be_acc", "be_acc_valid_db", "db_acc", "sr"):
        assert summary[key] == 1.0, (key, summary[key])
    items = items_by_name(report)
    created = items["test_create_event_answers_the_event"]
    assert created["db_valid"] is True
    assert {"op": "INSERT", "table": "events", "expected": True, "implicit": False, "count": 1, "satisfied": True} in created["db_effects"]
    assert items["test_health_answers_ok"]["db_valid"] is None  # no expectation
    assert all(i["db_valid"] is True for i in items.values() if i["kind"] == "bdd")
    snapshot = er_bench / "ref" / "artifacts" / TASK / "db-snapshot.json"
    assert snapshot.is_file() and '"registrations"' in snapshot.read_text()
    assert not clusters_of(os.getpid()), "the task's cluster must be gone after the run"


def _backend_accuracy(report: dict[str, Any]) -> tuple[float, float]:
    """BE Acc and BE Acc w/ valid DB recomputed from the items, as DESIGN.md defines them."""
    backend = [i for i in report["tasks"][0]["items"] if i["kind"] == "http"]
    passed = [i for i in backend if i["outcome"] == "passed"]
    return len(passed) / len(backend), sum(i["db_valid"] is not False for i in passed) / len(backend)


RESTART_ITEMS = {"test_events_and_registrations_survive_a_restart", "test_rules_still_hold_after_a_restart", "test_a_cancellation_survives_a_restart"}
ROW_ITEMS = {
    "test_registrations_are_rows_with_lower_cased_emails", "test_events_and_live_registrations_are_rows",
    "test_starts_at_is_stored_as_the_instant", "test_seats_left_is_capacity_minus_the_rows",
}
# oracles/event-registration/test_security_rules.py: items that read the rows their requests wrote
SECURITY_ROW_ITEMS = {
    "test_quotes_in_an_email_reach_the_duplicate_check_as_text", "test_every_string_field_takes_hostile_text_verbatim",
    "test_concurrent_registrations_never_overbook", "test_concurrent_registrations_of_one_email_take_one_seat",
}
DB_CASES = {"events_table", "registrations_event_fk", "registrations_table", "registrations_unique_email"}


def test_a_fake_backend_passes_the_api_but_not_the_database_checks(pytester: pytest.Pytester, er_bench: Path) -> None:
    result, report = evaluate(pytester, materialize(er_bench, "fake-backend"), "fake")
    summary = report["summary"]
    # The API answers as it should, but nothing reaches the database: the items that read rows
    # (test_database.py, with the db fixture), restarts, and verbatim storage fail; the DB cases
    # pass (the tables exist, only their rows are missing); every page scenario is 'without valid DB'.
    failed = {name for name, item in items_by_name(report).items() if item["outcome"] == "failed"}
    assert failed == ROW_ITEMS | RESTART_ITEMS | SECURITY_ROW_ITEMS | {"test_hostile_text_is_stored_verbatim_and_touches_nothing_else"}
    be_acc, be_acc_valid_db = _backend_accuracy(report)
    assert summary["fe_acc"] == 1.0 and summary["fe_acc_valid_db"] == 0.0 and summary["db_acc"] == 1.0
    assert summary["be_acc"] == pytest.approx(be_acc) and summary["be_acc_valid_db"] == pytest.approx(be_acc_valid_db)
    assert be_acc_valid_db < be_acc
    result.stdout.fnmatch_lines([
        "*backendbench database checks*",
        "*test_create_event_answers_the_event: expected INSERT on events; the candidate's database saw: no effective statements*",
    ])
    assert items_by_name(report)["test_create_event_answers_the_event"]["db_valid"] is False
    assert not clusters_of(os.getpid())


def test_a_service_without_tables_fails_the_database_cases_clearly(pytester: pytest.Pytester, er_bench: Path) -> None:
    result, report = evaluate(pytester, materialize(er_bench, "no-tables"), "none")
    assert report["summary"]["db_acc"] == 0.0
    result.stdout.fnmatch_lines([
        "*database case 'events_table' failed: the database has no tables*",
        "*the candidate created no table in its database 'app'*",
    ])
    failed = {name for name, item in items_by_name(report).items() if item["outcome"] == "failed"}
    assert DB_CASES | ROW_ITEMS <= failed
    message = items_by_name(report)["test_a_refused_event_stores_nothing"]["message"]
    assert 'relation "events" does not exist' in message


def test_a_malformed_db_case_is_a_collection_error_naming_the_field(pytester: pytest.Pytester, er_bench: Path) -> None:
    (er_bench / "oracles" / TASK / "db" / "broken.yaml").write_text("description: x\nrequirement: R99\nschema: {type: object}\n")
    (er_bench / "oracles" / TASK / "db" / "badref.yaml").write_text(
        "description: x\nrequirement: R8\nschema: {properties: {tables: {$ref: '#/$defs/nope'}}}\n"
    )
    result = pytester.runpytest(f"--candidate={er_bench / 'oracles' / TASK / 'reference'}", f"--bench-task={TASK}", "--co", *RUN)
    result.stdout.fnmatch_lines(["*badref.yaml: schema: $ref '#/$defs/nope' points nowhere in the schema*"], consecutive=False)
    result.stdout.fnmatch_lines(["*broken.yaml: requirement: R99 not in*task.yaml*"])


def test_sigint_during_items_leaves_a_report_and_no_postgres(pytester: pytest.Pytester, er_bench: Path) -> None:
    (er_bench / "oracles" / TASK / "test_zz_hang.py").write_text(
        "import time\nimport pytest\n\n\n@pytest.mark.requirement('R1')\n@pytest.mark.category('api_surface')\n"
        "def test_hangs(http):\n    time.sleep(120)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--candidate={er_bench / 'oracles' / TASK / 'reference'}", f"--bench-task={TASK}",
         "--bench-report-dir=out", "-k", "hangs or health", *RUN],
        cwd=er_bench, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ},
    )
    deadline = time.monotonic() + 180
    clusters: list[Path] = []
    while time.monotonic() < deadline and not clusters:
        clusters = clusters_of(proc.pid)
        time.sleep(0.2)
    assert clusters, "the task's cluster never started"
    time.sleep(3)  # now inside the hanging item
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=60)[0].decode()
    assert "KeyboardInterrupt" in output
    assert read_report(er_bench / "out")["manifest"]["interrupted"] is True
    assert not clusters[0].exists()
    assert not [cmd for _, cmd in postgres_processes() if str(clusters[0]) in cmd]
    assert not clusters_of(proc.pid)


def test_no_postgres_process_outlives_the_run(pytester: pytest.Pytester, er_bench: Path) -> None:
    """The session ends only after the task's server and its backends are gone (issue 15 b)."""
    import shutil
    import tempfile

    # a TMPDIR of this run only, which the postgres OS user can enter (as root the cluster runs
    # as postgres; a folder below pytest's 0700 basetemp would send it to /tmp instead)
    private_tmp = Path(tempfile.mkdtemp(prefix="bbpg-", dir="/tmp"))
    private_tmp.chmod(0o755)
    try:
        _run_and_check_nothing_outlives(er_bench, private_tmp)
    finally:
        shutil.rmtree(private_tmp, ignore_errors=True)


def _run_and_check_nothing_outlives(er_bench: Path, private_tmp: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", f"--candidate={er_bench / 'oracles' / TASK / 'reference'}", f"--bench-task={TASK}",
         "--bench-report-dir=out", "-k", "health or boot or build", *RUN],
        cwd=er_bench, capture_output=True, text=True, env={**os.environ, "TMPDIR": str(private_tmp)}, check=False, timeout=300,
    )
    assert "3 passed" in proc.stdout, proc.stdout[-2000:]  # build, boot and health: the cluster ran
    left = [cmd for _, cmd in postgres_processes() if str(private_tmp) in cmd]
    assert not left, f"postgres still running after pytest exited: {left}"
    assert not list(private_tmp.glob("backendbench-pg-*"))
