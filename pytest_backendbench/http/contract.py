"""Contract conformance: every response the oracle receives is checked against openapi.yaml.

Conformance is recorded per item (and reported as its own metric) rather than failing the
item, so that a wrong status code is judged by the oracle's assertion and a schema drift
is still visible; ``--strict-contract`` turns violations into failures.
"""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import urlsplit

import requests

from ..errors import CandidateFailure, HarnessError
from .hang_guard import HangGuard


class ContractViolation(CandidateFailure):
    """A response did not conform to the task's OpenAPI contract (with --strict-contract)."""


class Contract:
    """An openapi-core validator for one task, independent of where the service listens."""

    def __init__(self, spec: dict[str, Any]) -> None:
        spec = copy.deepcopy(spec)
        # The service runs on an address the contract cannot know: keep only each server's path.
        servers = spec.get("servers") or [{"url": "/"}]
        spec["servers"] = [{"url": urlsplit(str(s.get("url", "/"))).path or "/"} for s in servers]
        from openapi_core import OpenAPI  # ~0.3 s of imports: only when a task has a contract

        self._api = OpenAPI.from_dict(spec)

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


class ContractSession(requests.Session):
    """A requests session bound to the service: relative paths, a timeout, contract checks."""

    def __init__(self, base_url: str, contract: Contract | None, timeout_s: float, strict: bool = False, guard: HangGuard | None = None) -> None:
        super().__init__()
        self.guard = guard  # a service that stopped answering fails the next requests at once
        # never route harness-to-candidate traffic through an environment proxy (and skip the
        # per-request environment lookups that would cost)
        self.trust_env = False
        self.base_url = base_url.rstrip("/")
        self.contract = contract
        self.timeout_s = timeout_s
        self.strict = strict
        self.request_count = 0
        self.checked = 0
        self.violations: list[str] = []

    def request(self, method: str | bytes, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        """Send to base_url + path; record and check the response against the contract."""
        __tracebackhide__ = True
        target = url.decode() if isinstance(url, bytes) else url
        if target.startswith("/"):
            target = self.base_url + target
        kwargs.setdefault("timeout", self.timeout_s)
        self.request_count += 1
        guard = self.guard if self.guard is not None and target.startswith(self.base_url) else None
        if guard is not None:
            guard.check(str(method), target)
        try:
            response = super().request(method, target, *args, **kwargs)  # type: ignore[arg-type]
        except requests.exceptions.Timeout:
            if guard is not None:
                guard.timed_out()
            raise
        if guard is not None:
            guard.answered()
        if self.contract is not None and target.startswith(self.base_url):
            self.checked += 1
            found = self.contract.violations(response)
            self.violations.extend(found)
            if found and self.strict:
                raise ContractViolation("response does not conform to openapi.yaml", "\n".join(found))
        return response
