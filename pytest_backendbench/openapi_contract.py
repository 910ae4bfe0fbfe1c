"""A task's OpenAPI contract compiled with openapi-core: which responses break it, as readable lines.

Compiled once per task and worker (``taskrun.TaskRunRegistry.contract``); the ``http`` fixture's
session (http/contract.py) checks every response the oracle receives against it.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import urlsplit

import requests

from .errors import HarnessError


class Contract:
    """An openapi-core validator for one task, independent of where the service listens."""

    def __init__(self, spec: dict[str, Any]) -> None:
        spec = copy.deepcopy(spec)
        # The service runs on an address the contract cannot know: keep only each server's path.
        servers = spec.get("servers") or [{"url": "/"}]
        spec["servers"] = [{"url": urlsplit(str(s.get("url", "/"))).path or "/"} for s in servers]
        from openapi_core import Config, OpenAPI  # ~0.3 s of imports: only when a task has a contract

        # tasks.load_contract validated the document already: openapi-core's own check would
        # validate it a second time (about 0.15 s of CPU per contract and process)
        self._api = OpenAPI.from_dict(spec, config=Config(spec_validator_cls=None))

    def violations(self, response: requests.Response) -> list[str]:
        """Every way this response breaks the contract, as readable one-liners."""
        from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

        try:
            request = RequestsOpenAPIRequest(response.request)
            errors = list(self._api.iter_response_errors(request, RequestsOpenAPIResponse(response)))
        except Exception as err:
            raise HarnessError(f"checking a response against openapi.yaml failed inside openapi-core: {type(err).__name__}: {err}") from err
        found = []
        for error in errors:
            found.append(f"{response.request.method} {urlsplit(response.request.url or '').path} -> {response.status_code}: {_describe(error)}")
        return found


def _describe(error: Exception) -> str:
    detail = str(error)
    cause = error.__cause__
    schema_errors = getattr(cause, "schema_errors", None) or getattr(error, "schema_errors", None)
    if schema_errors:
        parts = []
        for schema_error in list(schema_errors)[:3]:
            where = "/".join(str(p) for p in getattr(schema_error, "absolute_path", [])) or "(body)"
            parts.append(f"{where}: {getattr(schema_error, 'message', schema_error)}")
        detail += " [" + "; ".join(parts) + "]"
    elif cause is not None and str(cause) and str(cause) not in detail:
        detail += f" ({cause})"
    return detail
