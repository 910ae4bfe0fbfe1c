"""What every task's PostgreSQL server is, whoever provides it: roles, database, settings.

The harness logs in as a superuser whose statements are never attributed to the candidate;
the candidate gets a non-superuser role owning one database. Both providers of a server (a
local cluster, a container sidecar) start it with ``SERVER_SETTINGS``.
"""

from __future__ import annotations

HARNESS_USER = "backendbench"
APP_USER = "app"
APP_DATABASE = "app"
MARKER_APPLICATION = "backendbench-marker"
HARNESS_APPLICATION = "backendbench"
SYSTEM_SCHEMAS = ("pg_catalog", "information_schema", "pg_toast")
"""Schemas of the server itself: never the candidate's tables, never an effect."""

# Settings of every task server. fsync and friends are off: the cluster is thrown away.
SERVER_SETTINGS: dict[str, str] = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "60",
    "shared_buffers": "32MB",
    # dynamic shared memory in the data dir: nothing is left in /dev/shm after a SIGKILL
    "dynamic_shared_memory_type": "mmap",
    "log_statement": "all",
    "logging_collector": "on",
    "log_destination": "stderr,csvlog",
    "log_filename": "postgresql.log",
    "log_rotation_age": "0",
    "log_rotation_size": "0",
    "log_line_prefix": "%m [%c] %p %q%u@%d %a ",
    "log_min_error_statement": "error",
    "timezone": "UTC",
}

TEMPLATE_SQL = (f"CREATE ROLE {APP_USER} LOGIN;", f"CREATE DATABASE {APP_DATABASE} OWNER {APP_USER};")
"""What every task database starts from: the candidate's role owning an empty database."""


def is_system_schema(schema: str | None) -> bool:
    """Whether ``schema`` belongs to the server (also per-session ``pg_temp_N``/``pg_toast_temp_N``)."""
    return schema is not None and (schema in SYSTEM_SCHEMAS or schema.startswith(("pg_toast", "pg_temp")))
