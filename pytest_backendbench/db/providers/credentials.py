"""How the candidate and the harness log in to a task's database (credentials, passwords)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from .server import APP_USER, HARNESS_USER, TEMPLATE_SQL


@dataclass(frozen=True)
class DatabaseCredentials:
    """How one party reaches one database: host, port, role, password, database name."""

    host: str
    port: int
    user: str
    password: str
    dbname: str

    @property
    def url(self) -> str:
        """A libpq URL (``postgresql://user:password@host:port/dbname``)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"postgresql://{self.user}:{self.password}@{host}:{self.port}/{self.dbname}"

    def environment(self) -> dict[str, str]:
        """The variables the contract promises a candidate of a ``database: postgres`` task."""
        return {
            "DATABASE_URL": self.url,
            "DB_HOST": self.host,
            "DB_PORT": str(self.port),
            "DB_USERNAME": self.user,
            "DB_PASSWORD": self.password,
            "DB_NAME": self.dbname,
        }


@dataclass(frozen=True)
class DatabaseSecrets:
    """The per-task passwords: the harness's superuser and the candidate's role."""

    harness_password: str = field(default_factory=lambda: secrets.token_hex(16))
    app_password: str = field(default_factory=lambda: secrets.token_hex(16))

    def setup_sql(self) -> str:
        """Statements that turn a fresh cluster into the task's database (one per line, for
        ``postgres --single``): the candidate's role and database, then the passwords."""
        return "\n".join([*TEMPLATE_SQL, *self.password_sql(), ""])

    def password_sql(self) -> list[str]:
        """The per-task passwords of the harness's superuser and the candidate's role."""
        return [
            f"ALTER ROLE {HARNESS_USER} PASSWORD '{self.harness_password}';",
            f"ALTER ROLE {APP_USER} PASSWORD '{self.app_password}';",
        ]
