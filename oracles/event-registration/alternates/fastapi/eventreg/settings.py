import os
from urllib.parse import quote


def port() -> int:
    return int(os.environ.get("PORT") or 8000)


def dsn() -> str:
    """DATABASE_URL, or a URL assembled from the DB_* variables."""
    if os.environ.get("DATABASE_URL"):
        return os.environ["DATABASE_URL"]
    user = os.environ.get("DB_USER") or os.environ.get("DB_USERNAME") or "postgres"
    password = os.environ.get("DB_PASSWORD")
    host = os.environ.get("DB_HOST") or "localhost"
    db_port = os.environ.get("DB_PORT") or "5432"
    name = os.environ.get("DB_NAME") or "postgres"
    cred = quote(user, safe="") + (":" + quote(password, safe="") if password else "")
    return "postgresql://%s@%s:%s/%s" % (cred, host, db_port, quote(name, safe=""))
