"""The docker runtime's database: a PostgreSQL sidecar container on the task's network.

The candidate reaches it as ``postgres:5432``; its image is built from
``runtime/postgres/Dockerfile`` (or ``--postgres-image``) and its start script is passed inline,
so any Debian-based image with the server binaries works. The container itself is created and
removed by ``runtime/docker.py``; this module says what runs in it and reads its log through exec.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import HarnessError
from .credentials import DatabaseCredentials
from .database import TaskDatabase
from .server import APP_DATABASE, APP_USER, HARNESS_USER, SERVER_SETTINGS

CONTAINER_PORT = 5432
CONTAINER_HOST_ALIAS = "postgres"
POSTGRES_DOCKERFILE_DIR = Path(__file__).resolve().parent.parent / "runtime" / "postgres"


def sidecar_script() -> str:
    """The sidecar's command (``sh -c``): copy the image's template cluster (or initdb), apply
    the setup SQL from $BB_SETUP_SQL in single-user mode, then exec the server."""
    options = " ".join(f"-c {name}='{value}'" for name, value in SERVER_SETTINGS.items())
    return (
        "set -e\n"
        "BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)\n"
        '[ -n "$BIN" ] || BIN=$(dirname "$(command -v postgres)")\n'
        "D=/tmp/backendbench-pg/data; L=/tmp/backendbench-pg/log\n"
        'mkdir -p /tmp/backendbench-pg "$L" /tmp/backendbench-pg/sock\n'
        'if [ -f /opt/backendbench/pgtemplate/PG_VERSION ]; then cp -a /opt/backendbench/pgtemplate "$D"; '
        f'else "$BIN/initdb" -D "$D" -U {HARNESS_USER} --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >/dev/null; fi\n'
        'echo "host all all 0.0.0.0/0 scram-sha-256" >> "$D/pg_hba.conf"\n'
        'echo "host all all ::/0 scram-sha-256" >> "$D/pg_hba.conf"\n'
        'printf "%s" "$BB_SETUP_SQL" | "$BIN/postgres" --single -D "$D" -c log_statement=none -c fsync=off postgres >/dev/null\n'
        f'exec "$BIN/postgres" -D "$D" -c listen_addresses="*" -c port={CONTAINER_PORT} '
        f'-c unix_socket_directories=/tmp/backendbench-pg/sock -c log_directory="$L" {options}\n'
    )


CONTAINER_LOG = "/tmp/backendbench-pg/log/postgresql.csv"
READ_ATTEMPTS = 3


class ContainerPostgres(TaskDatabase):
    """The sidecar container's database (the docker runtime's); the log is read through exec."""

    log_description = f"{CONTAINER_LOG} in the sidecar"

    def __init__(self) -> None:
        super().__init__()
        self.container: Any = None

    @property
    def candidate(self) -> DatabaseCredentials:
        return DatabaseCredentials(CONTAINER_HOST_ALIAS, CONTAINER_PORT, APP_USER, self.secrets.app_password, APP_DATABASE)

    def container_environment(self) -> dict[str, str]:
        """The sidecar's own environment (its setup SQL)."""
        return {"BB_SETUP_SQL": self.secrets.setup_sql(), "LANG": "C.UTF-8"}

    def read_log(self, offset: int) -> bytes:
        if self.container is None:
            return b""
        misread: ValueError | None = None
        for _ in range(READ_ATTEMPTS):
            try:
                result = self.container.exec_run(["tail", "-c", f"+{offset + 1}", CONTAINER_LOG], stdout=True, stderr=False, demux=True)
            except ValueError as err:
                # docker-py now and then reads a payload byte as a frame header ("58 is not a
                # valid stream", docker/docker-py#3160); the read is idempotent, so read again
                misread = err
                continue
            except Exception as err:  # docker.errors.APIError, requests errors: the engine's trouble
                raise HarnessError(f"could not read the sidecar's statement log: {err}") from err
            stdout = result.output[0] if isinstance(result.output, tuple) else result.output
            return bytes(stdout or b"")
        raise HarnessError(f"could not read the sidecar's statement log: {misread} ({READ_ATTEMPTS} attempts)") from misread

    def server_log(self, tail: int = 40) -> str:
        if self.container is None:
            return ""
        try:
            return bytes(self.container.logs(tail=tail)).decode(errors="replace")
        except Exception:  # noqa: BLE001 - diagnostics only
            return ""

