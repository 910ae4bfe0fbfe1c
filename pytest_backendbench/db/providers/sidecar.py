"""The docker runtime's database: a PostgreSQL sidecar container on the task's network.

The candidate reaches it as ``postgres:5432``; its image is built from
``runtime/postgres/Dockerfile`` (or ``--postgres-image``) and its start script is passed inline,
so any Debian-based image with the server binaries works. ``start_sidecar`` launches it on the
service's network through the service (``SidecarNetwork``: the docker service lends its container
calls), says what runs in it and waits for it; the service removes it when it stops. The log is
followed through one exec (``LogFollower``), or read through one exec per read where that fails.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any, Protocol

from ...errors import BootFailure, HarnessError
from ...host.wait import wait_until_ready
from .credentials import DatabaseCredentials
from .database import PostgresReady, TaskDatabase
from .server import APP_DATABASE, APP_USER, HARNESS_USER, SERVER_SETTINGS

CONTAINER_PORT = 5432
CONTAINER_HOST_ALIAS = "postgres"
POSTGRES_DOCKERFILE_DIR = Path(__file__).resolve().parents[2] / "runtime" / "postgres"
MEMORY_LIMIT = "256m"
BOOT_TIMEOUT_S = 60.0


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
FOLLOW_STARTS = 3
"""Follower execs one sidecar may start (a stream the engine ends is resumed where it stopped)."""
FOLLOW_POLL_S = "0.02"
"""tail's poll interval where inotify is unavailable (its default, 1 s, would delay every item)."""


class LogFollower:
    """The sidecar's statement log, followed through one exec (``tail -F``) into memory.

    A ``docker exec`` costs three engine round trips and a ``runc exec`` (about 60 ms of the
    engine's time); reading the log that way once or more per item of a ``database: postgres``
    task cost more engine time than the item's own requests. Followed, a read is a slice of
    what has arrived. ``data`` holds the file from byte 0; a stream that ends (the engine's
    client timeout on a quiet log, the container gone) leaves ``alive`` False, and
    ``ContainerPostgres`` resumes it from ``len(data)`` or reads through exec again.
    """

    def __init__(self) -> None:
        self.data = bytearray()
        self.lock = threading.Lock()
        self.alive = False
        self.starts = 0

    def start(self, container: Any) -> bool:
        """Start (or resume) following at ``len(data)``; False when the engine refused the exec."""
        api = getattr(getattr(container, "client", None), "api", None)
        if api is None or self.starts >= FOLLOW_STARTS:
            return False
        self.starts += 1
        command = ["tail", "-c", f"+{len(self.data) + 1}", "-s", FOLLOW_POLL_S, "-F", CONTAINER_LOG]
        try:
            exec_id = api.exec_create(container.id, command, stdout=True, stderr=False)["Id"]
            chunks = api.exec_start(exec_id, stream=True)
        except Exception:  # noqa: BLE001 - docker.errors.APIError, requests errors: read through exec instead
            return False
        self.alive = True
        threading.Thread(target=self._pump, args=(chunks,), name=f"sidecar-log-{getattr(container, 'name', '')}", daemon=True).start()
        return True

    def _pump(self, chunks: Any) -> None:
        # a stream that breaks (OSError, docker-py's errors) ends like one the engine closed: the
        # next read resumes it or falls back to exec
        with contextlib.suppress(Exception):
            for chunk in chunks:
                with self.lock:
                    self.data.extend(chunk)
        self.alive = False

    def read(self, offset: int) -> bytes:
        """What has arrived from byte ``offset`` on."""
        with self.lock:
            return bytes(self.data[offset:])


class ContainerPostgres(TaskDatabase):
    """The sidecar container's database (the docker runtime's); the log is followed through exec."""

    log_description = f"{CONTAINER_LOG} in the sidecar"

    def __init__(self) -> None:
        super().__init__()
        self.container: Any = None
        self.follower = LogFollower()

    @property
    def candidate(self) -> DatabaseCredentials:
        return DatabaseCredentials(CONTAINER_HOST_ALIAS, CONTAINER_PORT, APP_USER, self.secrets.app_password, APP_DATABASE)

    def container_environment(self) -> dict[str, str]:
        """The sidecar's own environment (its setup SQL)."""
        return {"BB_SETUP_SQL": self.secrets.setup_sql(), "LANG": "C.UTF-8"}

    def read_log(self, offset: int) -> bytes:
        if self.container is None:
            return b""
        follower = self.follower
        if follower.alive or follower.start(self.container):
            return follower.read(offset)
        return self.read_log_through_exec(offset)

    def read_log_through_exec(self, offset: int) -> bytes:
        """One exec per read: where the engine would not stream (and the follower gave up)."""
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



class SidecarNetwork(Protocol):
    """What a docker service lends its sidecar: containers on the task's private network."""

    def create_container(
        self, image: str, *, name: str, env: dict[str, str], aliases: list[str], labels: dict[str, str], memory: str, cpus: float, pids: int, port: int,
        extra: dict[str, Any] | None = None,
    ) -> Any: ...

    def start_container(self, container: Any, what: str) -> None: ...

    def address(self, container: Any, port: int, alias: str = "service") -> tuple[str, int]: ...

    def exit_reason_of(self, container: Any, memory_limit: str) -> str | None: ...

    def container_logs(self, container: Any, tail: int | None) -> str: ...


def start_sidecar(network: SidecarNetwork, database: ContainerPostgres, image: str, name: str, labels: dict[str, str]) -> None:
    """Run ``database``'s server in a container on the service's network and wait until it logs in.

    The container is set on ``database`` as soon as it exists, so a service that fails to start
    still removes it. A sidecar that does not come up is the harness's failure, not the candidate's.
    """
    container = database.container = network.create_container(
        image,
        name=name,
        env=database.container_environment(),
        aliases=[CONTAINER_HOST_ALIAS],
        labels=labels,
        memory=MEMORY_LIMIT,
        cpus=1.0,
        pids=256,
        port=CONTAINER_PORT,
        extra={"entrypoint": ["sh", "-c"], "command": [sidecar_script()], "user": "postgres"},
    )
    network.start_container(container, "starting the PostgreSQL sidecar")
    database.harness_host, database.harness_port = network.address(container, CONTAINER_PORT, CONTAINER_HOST_ALIAS)
    try:
        wait_until_ready(
            [PostgresReady(database)],
            BOOT_TIMEOUT_S,
            alive=lambda: network.exit_reason_of(container, MEMORY_LIMIT),
            logs=lambda: network.container_logs(container, 200),
            what="the task's PostgreSQL sidecar",
        )
    except BootFailure as err:
        raise HarnessError(f"{err.title}\n{err.detail}") from err
