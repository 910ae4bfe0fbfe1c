"""A task's OpenAPI contract compiled with openapi-core: which responses break it, as readable lines.

Compiled once per task and worker (``taskrun.TaskRunRegistry.contract``); the ``http`` fixture's
session (http/contract.py) checks every response the oracle receives against it.

Why a helper around openapi-core. For every value it checks, openapi-core builds a fresh
jsonschema validator (deep-copying its format checker); a task's document never changes during a
run, so ``_ReusedSchemaValidators`` builds each schema's validator once. It goes in through
openapi-core's own configuration (``Config.schema_validators_factory``) and the verdicts are
openapi-core's; a response check costs a third to a half less CPU (bench/contract_check.py
measures it and compares every verdict with openapi-core's plain path).
"""

from __future__ import annotations

import copy
from typing import Any, cast
from urllib.parse import urlsplit

import requests

from .errors import HarnessError


class Contract:
    """An openapi-core validator for one task, independent of where the service listens."""

    def __init__(self, spec: dict[str, Any], *, reuse: bool = True) -> None:
        """``reuse=False`` keeps openapi-core's plain path (the baseline the benchmark compares with)."""
        spec = copy.deepcopy(spec)
        # The service runs on an address the contract cannot know: keep only each server's path.
        servers = spec.get("servers") or [{"url": "/"}]
        spec["servers"] = [{"url": urlsplit(str(s.get("url", "/"))).path or "/"} for s in servers]
        from openapi_core import Config, OpenAPI  # ~0.3 s of imports: only when a task has a contract

        # tasks.load_contract validated the document already: openapi-core's own check would
        # validate it a second time (about 0.15 s of CPU per contract and process)
        plain = OpenAPI.from_dict(spec, config=Config(spec_validator_cls=None))
        self._check: Any = plain.iter_response_errors
        validator_cls: Any = plain.response_validator_cls  # the class for the document's OpenAPI version
        if reuse and validator_cls is not None:
            factory = _ReusedSchemaValidators(validator_cls.schema_validators_factory)
            reusing = OpenAPI(plain.spec, config=Config(spec_validator_cls=None, schema_validators_factory=cast(Any, factory)))
            # what iter_response_errors calls for a request that is no webhook (ours never are),
            # without its three typing.Protocol isinstance checks per response
            self._check = reusing.response_validator.iter_errors

    def violations(self, response: requests.Response) -> list[str]:
        """Every way this response breaks the contract, as readable one-liners."""
        from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

        try:
            request = RequestsOpenAPIRequest(response.request)
            errors = list(self._check(request, RequestsOpenAPIResponse(response)))
        except Exception as err:
            raise HarnessError(f"checking a response against openapi.yaml failed inside openapi-core: {type(err).__name__}: {err}") from err
        found = []
        for error in errors:
            found.append(f"{response.request.method} {urlsplit(response.request.url or '').path} -> {response.status_code}: {_describe(error)}")
        return found


class _ReusedSchemaValidators:
    """openapi-core's schema validator factory, with each schema's validator built once.

    A built validator keeps no state between values, and the key holds everything ``create``
    reads besides the (unchanging) document: the schema's place in it and the options.
    """

    def __init__(self, built_by: Any) -> None:
        self._built_by = built_by
        self._built: dict[tuple[Any, ...], Any] = {}

    def create(self, spec: Any, schema: Any, format_validators: Any = None, extra_format_validators: Any = None,
               forbid_unspecified_additional_properties: bool = False, enforce_properties_required: bool = False) -> Any:
        key = (tuple(schema.parts), id(format_validators), id(extra_format_validators), forbid_unspecified_additional_properties, enforce_properties_required)
        validator = self._built.get(key)
        if validator is None:
            validator = self._built[key] = self._built_by.create(
                spec, schema, format_validators=format_validators, extra_format_validators=extra_format_validators,
                forbid_unspecified_additional_properties=forbid_unspecified_additional_properties,
                enforce_properties_required=enforce_properties_required,
            )
        return validator

    def __getattr__(self, name: str) -> Any:
        return getattr(self._built_by, name)


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
