"""Which local provider gives a process-runtime task its PostgreSQL server.

A provider is a ``TaskDatabase`` subclass constructed as ``Provider(cache_dir, label)`` whose
``start()`` returns it started. Providers are named by dotted paths and imported only when a
task needs one, so a provider's dependencies (a server wheel, say) cost nothing otherwise.
To add one: write ``db/providers/<name>.py`` with the class and add its path here.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ...errors import HarnessError
from .database import TaskDatabase

DEFAULT_LOCAL_PROVIDER = "auto"
LOCAL_PROVIDERS: dict[str, str] = {
    "cluster": "pytest_backendbench.db.providers.local_cluster:LocalPostgres",
    "embedded": "pytest_backendbench.db.providers.embedded:EmbeddedPostgres",
    "auto": "pytest_backendbench.db.providers.embedded:auto_local_postgres",  # cluster if installed, else embedded
}
"""Provider name -> ``module:Class``; the name is what ``--bench-postgres`` selects."""


def local_database(provider: str, cache_dir: Path, label: str) -> TaskDatabase:
    """A not-yet-started database of ``provider`` for the task labelled ``label``."""
    target = LOCAL_PROVIDERS.get(provider)
    if target is None:
        raise HarnessError(f"unknown PostgreSQL provider {provider!r}; choose one of {', '.join(sorted(LOCAL_PROVIDERS))}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    database = cls(cache_dir, label)
    if not isinstance(database, TaskDatabase):
        raise HarnessError(f"PostgreSQL provider {provider!r} ({target}) is not a TaskDatabase")
    return database
