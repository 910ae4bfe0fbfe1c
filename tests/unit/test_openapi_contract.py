"""The contract check that reuses schema validators and the listed paths gives openapi-core's verdicts.

Every response below is checked by ``Contract`` (reusing) and by ``Contract(reuse=False)``
(openapi-core's plain path); the lists of violations must be equal, also when the same schema is
met again after other responses (a reused validator keeps nothing from the last value).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from requests.structures import CaseInsensitiveDict

from pytest_backendbench.openapi_contract import Contract

ITEM = {"type": "object", "required": ["id", "name", "created_at"], "additionalProperties": False,
        "properties": {"id": {"type": "integer", "minimum": 1}, "name": {"type": "string", "maxLength": 5},
                       "created_at": {"type": "string", "format": "date-time"}, "kind": {"enum": ["a", "b"]}}}
ERROR = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}


def json_response(schema_ref: str, headers: dict[str, Any] | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = {"description": "x", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}
    if headers:
        answer["headers"] = headers
    return answer


SPEC: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "t", "version": "1"},
    "servers": [{"url": "http://example.test/api"}],
    "paths": {
        "/items": {
            "get": {"responses": {"200": {"description": "x", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}}}}}},
            "post": {"responses": {"201": json_response("#/components/schemas/Item", {"Location": {"required": True, "schema": {"type": "string"}}}),
                                   "422": json_response("#/components/schemas/Error")}},
        },
        "/items/{item_id}": {
            "parameters": [{"name": "item_id", "in": "path", "required": True, "schema": {"type": "integer"}}],
            "get": {"responses": {"200": json_response("#/components/schemas/Item"), "404": json_response("#/components/schemas/Error")}},
            "delete": {"responses": {"204": {"description": "gone"}}},
        },
        "/items/mine": {"get": {"responses": {"200": json_response("#/components/schemas/Item"), "default": json_response("#/components/schemas/Error")}}},
    },
    "components": {"schemas": {"Item": ITEM, "Error": ERROR}},
}
GOOD = {"id": 1, "name": "abc", "created_at": "2024-02-29T12:00:00Z"}


def answer(method: str, path: str, status: int, body: Any = None, content_type: str = "application/json", headers: dict[str, str] | None = None) -> requests.Response:
    """A response as the ``http`` fixture's session would hand it over (request attached)."""
    request = requests.Request(method, f"http://127.0.0.1:8123/api{path}").prepare()
    response = requests.Response()
    response.status_code, response.request, response.url = status, request, request.url or ""
    response.headers = CaseInsensitiveDict({"Content-Type": content_type, **(headers or {})})
    response._content = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    return response


CASES = {
    "conforming item": answer("GET", "/items/7", 200, GOOD),
    "conforming list": answer("GET", "/items", 200, [GOOD, {**GOOD, "id": 2, "kind": "b"}]),
    "plain path wins over the template": answer("GET", "/items/mine", 200, GOOD),
    "default response": answer("GET", "/items/mine", 418, {"error": "teapot"}),
    "missing required field": answer("GET", "/items/7", 200, {"id": 1, "name": "abc"}),
    "wrong type deep in a list": answer("GET", "/items", 200, [GOOD, {**GOOD, "id": "2"}]),
    "bad date-time format": answer("GET", "/items/7", 200, {**GOOD, "created_at": "yesterday"}),
    "not in the enum": answer("GET", "/items/7", 200, {**GOOD, "kind": "c"}),
    "unexpected property": answer("GET", "/items/7", 200, {**GOOD, "secret": "x"}),
    "too long": answer("GET", "/items/7", 200, {**GOOD, "name": "abcdefgh"}),
    "undocumented status": answer("GET", "/items/7", 500, {"error": "boom"}),
    "undocumented content type": answer("GET", "/items/7", 200, b"<p>hi</p>", content_type="text/html"),
    "body that is not JSON": answer("GET", "/items/7", 200, b"{not json"),
    "required header missing": answer("POST", "/items", 201, GOOD),
    "required header present": answer("POST", "/items", 201, GOOD, headers={"Location": "/api/items/1"}),
    "unknown path": answer("GET", "/nowhere", 200, GOOD),
    "unknown method": answer("PUT", "/items/7", 200, GOOD),
    "empty 204": answer("DELETE", "/items/7", 204, None, content_type=""),
    "error body of the wrong shape": answer("POST", "/items", 422, {"message": "no"}),
}


@pytest.fixture(scope="module")
def contracts() -> tuple[Contract, Contract]:
    return Contract(SPEC), Contract(SPEC, reuse=False)


@pytest.mark.parametrize("case", list(CASES))
def test_verdicts_equal_openapi_cores_plain_path(case: str, contracts: tuple[Contract, Contract]) -> None:
    reusing, plain = contracts
    assert reusing.violations(CASES[case]) == plain.violations(CASES[case])


def test_the_cases_include_both_verdicts(contracts: tuple[Contract, Contract]) -> None:
    """The comparison above means something only if some cases break the contract and some do not."""
    _, plain = contracts
    broken = {case for case, response in CASES.items() if plain.violations(response)}
    assert "conforming item" not in broken and "required header present" not in broken
    assert {"missing required field", "bad date-time format", "undocumented status", "required header missing", "unknown path"} <= broken


def test_a_reused_validator_keeps_nothing_from_the_last_value(contracts: tuple[Contract, Contract]) -> None:
    reusing, plain = contracts
    order = ["missing required field", "conforming item", "bad date-time format", "conforming item", "too long", "conforming list", "wrong type deep in a list"]
    assert [reusing.violations(CASES[c]) for c in order] == [plain.violations(CASES[c]) for c in order]
    assert reusing.violations(CASES["conforming item"]) == []
