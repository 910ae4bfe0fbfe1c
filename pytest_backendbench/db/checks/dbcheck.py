"""The database dimension of oracle items: what each item made the candidate do to its database.

For every http and bdd item of a ``database: postgres`` task, the statements the candidate
sent between the item's setup and the end of its call are read from the server's statement
log (``database.StatementLog``, parsed by ``statement_log.py``), turned into effects and judged
against the item's expectations by ``effects.py``:

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

This module is the pytest wiring of that: options, the per-item capture hooks and the terminal
summary; the ``db`` fixture (``fixture.py``) is registered from here. DB cases are collected by
collect/routing.py (items in db_cases.py); scenarios' ``@db_effect`` tags become markers in
bdd/gherkin.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ...errors import HarnessError, OracleError
from ...items import ItemKind, item_kind
from ...results import PhaseRecord
from ...taskrun import item_extra, session_registry
from ..providers.database import TaskDatabase, database_of
from ..providers.statement_log import CapturedStatement, records_after_marker, statements_of
from .effects import NO_DB_WORK, Expectation, Verdict, judge
from .fixture import db

SECTION_STATEMENTS = 40
CAPTURE_KEY = pytest.StashKey["ItemCapture"]()

__all__ = ["db", "expectations_of", "finish_capture", "postgres_image_option"]


# --- options -------------------------------------------------------------------

def postgres_image_option(config: pytest.Config) -> str | None:
    """--postgres-image, else $BACKENDBENCH_POSTGRES_IMAGE, else the ini value, else None (config.py)."""
    from ...config import bench_config

    return bench_config(config).postgres_image or None


# --- per-item capture -----------------------------------------------------------------------


@dataclass
class ItemCapture:
    """The window on the statement log opened at an item's setup."""

    database: TaskDatabase
    start_token: str


def _database_for(item: pytest.Item) -> TaskDatabase | None:
    if item_kind(item) not in (ItemKind.HTTP, ItemKind.BDD):
        return None
    registry = session_registry(item.config)
    if registry is None:
        return None
    run = registry.for_item(item)
    if run is None or run.task.database != "postgres" or run.service is None:
        return None
    return database_of(run.service)


def expectations_of(item: pytest.Item) -> list[Expectation]:
    """The item's db_effect markers; a bdd item without any expects ANY on any table."""
    markers = list(item.iter_markers("db_effect"))
    if any(m.args and str(m.args[0]).upper() == NO_DB_WORK for m in markers):
        if len(markers) > 1:
            raise OracleError(f"{item.nodeid}: db_effect('NONE') (@db:none) says no database work, yet other db_effect expectations are given")
        return []
    expectations = [Expectation.from_marker(m) for m in markers]
    if not expectations and item_kind(item) is ItemKind.BDD:
        expectations = [Expectation("ANY", implicit=True)]
    return expectations


def finish_capture(item: pytest.Item, capture: ItemCapture) -> Verdict:
    """Read the item's statements, judge them, and record the verdict for the report."""
    log = capture.database.statement_log
    records = log.read_until(log.mark())
    window = records_after_marker(records, capture.start_token)
    statements = statements_of(window)
    verdict = judge(statements, expectations_of(item))
    extra = item_extra(item)
    extra.update(db_effects=verdict.effects, db_valid=verdict.valid)
    if verdict.problems:
        extra["db_problems"] = verdict.problems
    item.add_report_section("call", "database", _section(statements, verdict))
    return verdict


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


# --- terminal summary -----------------------------------------------------------------------


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    """List the items whose db_effect expectations did not hold (they passed or failed as usual)."""
    problems = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            data = getattr(report, "backendbench", None)
            if getattr(report, "when", None) != "teardown" or not isinstance(data, dict):
                continue
            record = PhaseRecord.from_dict(data)
            if record.result.db_valid is False:
                problems.append((report.nodeid, "; ".join(record.extra.get("db_problems", [])) or "db_effect expectations not met"))
    if not problems:
        return
    terminalreporter.section("backendbench database checks")
    terminalreporter.write_line(f"{len(problems)} item(s) did not cause the expected database effects (they count as failed 'w/ valid DB'):")
    for nodeid, problem in problems[:20]:
        terminalreporter.write_line(f"  {nodeid}: {problem}")
    if len(problems) > 20:
        terminalreporter.write_line(f"  ... {len(problems) - 20} more in report.json (db_valid: false)")
