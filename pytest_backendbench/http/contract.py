"""Contract conformance: every response the oracle receives is checked against openapi.yaml.

Conformance is recorded per item (and reported as its own metric) rather than failing the
item, so that a wrong status code is judged by the oracle's assertion and a schema drift
is still visible; ``--strict-contract`` turns violations into failures.
"""

from __future__ import annotations

from typing import Any

import requests

from ..errors import CandidateFailure
from ..openapi_contract import Contract
from .hang_guard import HangGuard


class ContractViolation(CandidateFailure):
    """A response did not conform to the task's OpenAPI contract (with --strict-contract)."""


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
