"""PostgreSQL's CSV statement log, parsed: which statements a client sent and whether they took effect.

Pure functions over bytes and records (no server, no connection), so they are tested alone.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from .server import HARNESS_USER


@dataclass(frozen=True)
class LogRecord:
    """One row of PostgreSQL's CSV log (the columns every version since 9.0 writes)."""

    at: str
    user: str
    database: str
    pid: str
    session: str
    line: int
    vxid: str
    severity: str
    message: str
    detail: str
    query: str
    application: str


@dataclass
class CapturedStatement:
    """One statement a client sent, as the server logged it, and whether it took effect."""

    sql: str
    session: str
    pid: str
    at: str
    parameters: str = ""
    failed: bool = False
    rolled_back: bool = False

    @property
    def effective(self) -> bool:
        """False when the statement raised an error or its transaction was rolled back."""
        return not (self.failed or self.rolled_back)


_STATEMENT = re.compile(r"^(?:statement|execute(?: fetch from)? [^:]*?): (?P<sql>.*)$", re.DOTALL)
_PREPARE = re.compile(r"^prepare: PREPARE\s+\S+?(?:\s*\([^)]*\))?\s+AS\s+(?P<sql>.*)$", re.DOTALL | re.IGNORECASE)
_ROLLBACK = re.compile(r"^\s*(?:ROLLBACK|ABORT)(?:\s+(?:WORK|TRANSACTION))?\s*;?\s*$", re.IGNORECASE)
_COMMIT = re.compile(r"^\s*(?:COMMIT|END)(?:\s+(?:WORK|TRANSACTION))?\s*;?\s*$", re.IGNORECASE)


def parse_csvlog(data: bytes) -> list[LogRecord]:
    """Parse CSV log text (whole records only) into records; unparsable rows are skipped."""
    records = []
    for row in csv.reader(io.StringIO(data.decode("utf-8", errors="replace"))):
        if len(row) < 23:
            continue
        try:
            line = int(row[6])
        except ValueError:
            line = 0
        records.append(
            LogRecord(
                at=row[0], user=row[1], database=row[2], pid=row[3], session=row[5], line=line, vxid=row[9],
                severity=row[11], message=row[13], detail=row[14], query=row[19], application=row[22],
            )
        )
    return records


def statements_of(records: list[LogRecord], exclude_user: str = HARNESS_USER) -> list[CapturedStatement]:
    """The statements in ``records`` sent by anyone but ``exclude_user``, with their outcome.

    A statement followed by an ERROR of its session failed; every statement of a transaction
    (same session and virtual transaction id) that ends in ROLLBACK was rolled back.
    """
    statements: list[CapturedStatement] = []
    last_of_session: dict[str, CapturedStatement] = {}
    by_transaction: dict[tuple[str, str], list[CapturedStatement]] = {}
    last_transaction: dict[str, tuple[str, str]] = {}
    for record in records:
        if record.user == exclude_user:
            continue
        if record.severity in ("ERROR", "FATAL", "PANIC"):
            previous = last_of_session.get(record.session)
            if previous is not None:
                previous.failed = True
            continue
        if record.severity != "LOG":
            continue
        match = _STATEMENT.match(record.message)
        if match is None:
            continue
        sql = match.group("sql")
        parameters = record.detail[len("parameters: "):] if record.detail.startswith("parameters: ") else ""
        prepared = _PREPARE.match(record.detail)
        if prepared is not None:  # SQL-level EXECUTE: the prepared text is in the detail
            sql = prepared.group("sql")
        statement = CapturedStatement(sql=sql, session=record.session, pid=record.pid, at=record.at, parameters=parameters)
        statements.append(statement)
        last_of_session[record.session] = statement
        # In an aborted transaction the backend logs a virtual xid of "<backend>/0"; the
        # ROLLBACK (or COMMIT, which then rolls back) it receives ends the session's last one.
        aborted = record.vxid.endswith("/0") or not record.vxid
        key = last_transaction.get(record.session) if aborted else (record.session, record.vxid)
        if not aborted:
            last_transaction[record.session] = (record.session, record.vxid)
            by_transaction.setdefault((record.session, record.vxid), []).append(statement)
        ends_badly = _ROLLBACK.match(sql) is not None or (aborted and _COMMIT.match(sql) is not None)
        if ends_badly and key is not None:
            statement.rolled_back = True
            for member in by_transaction.get(key, []):
                member.rolled_back = True
    return statements



def records_after_marker(records: list[LogRecord], token: str) -> list[LogRecord]:
    """The records after the one carrying marker ``token`` (all of them when it is absent)."""
    for index, record in enumerate(records):
        if token in record.message:
            return records[index + 1:]
    return records
