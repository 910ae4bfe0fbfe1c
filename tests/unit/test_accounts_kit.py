"""The oracles' accounts kit (http/accounts.py, http/account_items.py) against a scripted service.

The fake session answers each (method, path) from a script and records what it was sent, so the
tests see the exact requests a kit helper makes; classification goes through outcomes.classify
as it does for a real item.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
import requests

from pytest_backendbench.errors import HarnessError
from pytest_backendbench.http import account_items, accounts
from pytest_backendbench.http.accounts import Account, AccountsApi
from pytest_backendbench.outcomes import Outcome, classify

ORACLES = (Path("/bench/oracles/notes"),)
SERVICE = "http://127.0.0.1:40001"
ENV = {"ADMIN_USERNAME": "root", "ADMIN_PASSWORD": "root-pass", "STAFF_TOKEN": "t0ken"}


def answer(method: str, path: str, status: int, body: Any) -> requests.Response:
    """A response to ``method path`` with a JSON ``body``."""
    response = requests.Response()
    response.status_code = status
    response._content = json.dumps(body).encode()
    response.request = requests.Request(method, SERVICE + path).prepare()
    return response


class ScriptedSession:
    """Answers requests from ``script`` ((method, path) -> (status, body or a function of the sent JSON))."""

    timeout_s = 10.0

    def __init__(self, script: dict[tuple[str, str], tuple[int, Any]]) -> None:
        self.script = script
        self.sent: list[tuple[str, str, Any, dict[str, str]]] = []

    def request(self, method: str, path: str, json: Any = None, headers: dict[str, str] | None = None, **_: Any) -> requests.Response:
        self.sent.append((method, path, json, dict(headers or {})))
        status, body = self.script[(method, path)]
        return answer(method, path, status, body(json) if callable(body) else body)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)


def users_service() -> ScriptedSession:
    return ScriptedSession({
        ("POST", "/auth/token"): (200, lambda sent: {"token": f"tok-{sent['username']}", "user": {"id": f"id-{sent['username']}"}}),
        ("POST", "/users"): (201, lambda sent: {"id": f"id-{sent['username']}", "username": sent["username"]}),
    })


def test_the_admin_logs_in_once_with_the_credentials_task_yaml_promises() -> None:
    http = users_service()
    api = AccountsApi(http, ENV)  # type: ignore[arg-type]
    assert api.admin is api.admin
    assert api.admin == Account("id-root", "root", "root-pass", "tok-root", "admin")
    assert [(m, p, j) for m, p, j, _ in http.sent] == [("POST", "/auth/token", {"username": "root", "password": "root-pass"})]


def test_staff_are_created_by_the_admin_and_logged_in_and_registration_needs_no_token() -> None:
    http = users_service()
    api = AccountsApi(http, ENV)  # type: ignore[arg-type]
    clerk = api.staff("clerk", quota_bytes=5)
    created = http.sent[1]
    assert created[:2] == ("POST", "/users") and created[3] == {"Authorization": "Bearer tok-root"}
    assert created[2]["role"] == "clerk" and created[2]["quota_bytes"] == 5 and created[2]["username"].startswith("clerk_")
    assert (clerk.id, clerk.role, clerk.token, clerk.headers) == (f"id-{clerk.username}", "clerk", f"tok-{clerk.username}", {"Authorization": f"Bearer tok-{clerk.username}"})
    ann = api.register("ann")
    assert http.sent[-2][3] == {} and ann.username.startswith("ann_") and ann.token == f"tok-{ann.username}"


def test_a_fixed_admin_token_from_the_env_needs_no_login() -> None:
    http = users_service()

    class TokenApi(AccountsApi):
        admin_token_key = "STAFF_TOKEN"

    assert TokenApi(http, ENV).admin.headers == {"Authorization": "Bearer t0ken"}  # type: ignore[arg-type]
    assert http.sent == []


def test_missing_credentials_in_task_yaml_are_a_harness_error_that_says_where() -> None:
    with pytest.raises(HarnessError, match="ADMIN_PASSWORD in task.yaml's env"):
        accounts.bootstrap_credentials({"ADMIN_USERNAME": "root"}, "ADMIN_USERNAME", "ADMIN_PASSWORD")


def test_an_answer_without_the_field_a_setup_step_reads_fails_the_item() -> None:
    http = ScriptedSession({("POST", "/auth/token"): (200, {"token": "t"})})
    with pytest.raises(pytest.fail.Exception, match="answered no 'user.id'") as excinfo:
        AccountsApi(http, ENV).admin  # type: ignore[arg-type]  # noqa: B018 - the property logs in
    assert classify(excinfo, ORACLES, SERVICE) is Outcome.FAILED


def test_errors_carry_a_message_where_the_task_says_so() -> None:
    class MessageApi(AccountsApi):
        errors_carry_message = True

    bare = answer("GET", "/x", 404, {"error": "not_found"})
    assert AccountsApi(users_service(), ENV).error(bare, 404, "not_found", "read")["error"] == "not_found"  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="carries a 'message' string"):
        MessageApi(users_service(), ENV).error(bare, 404, "not_found", "read")  # type: ignore[arg-type]


def test_an_item_asks_for_its_fixtures_carries_its_marks_and_keeps_its_name() -> None:
    item = account_items.password_edge_item("R3")
    assert item.__name__ == "test_a_password_wrong_only_at_its_edge_gets_401"
    assert list(inspect.signature(item).parameters) == ["api", "http", "edge"]
    marks = {mark.name: mark.args for mark in item.pytestmark}  # type: ignore[attr-defined]
    assert marks["requirement"] == ("R3",) and marks["cwe"] == (287,) and marks["parametrize"][0] == "edge"
    caller_fixture = account_items.empty_paging_item("R9", caller="alice", path="/p", other_caller="admin")
    assert list(inspect.signature(caller_fixture).parameters) == ["api", "http", "alice", "admin"]


def run_item(item: Any, **values: Any) -> pytest.ExceptionInfo[BaseException]:
    with pytest.raises(BaseException) as excinfo:
        item(**values)
    return excinfo


def test_an_item_choking_on_the_answer_fails_the_candidate_as_in_an_oracle_module() -> None:
    """A list where an object was promised: ``.get`` raises AttributeError in the item's own code."""
    http = ScriptedSession({("GET", "/me"): (200, ["not", "an", "object"])})
    api = AccountsApi(http, ENV)  # type: ignore[arg-type]
    item = account_items.me_item("R4", caller="alice")
    excinfo = run_item(item, api=api, http=http, alice=Account("1", "alice", "pw", "t"))
    assert isinstance(excinfo.value, AssertionError) and "could not be read" in str(excinfo.value)
    assert classify(excinfo, ORACLES, SERVICE) is Outcome.FAILED


def test_an_item_whose_answer_is_wrong_fails_and_one_whose_harness_breaks_errors() -> None:
    http = ScriptedSession({("GET", "/health"): (503, {"status": "down"})})
    api = AccountsApi(http, ENV)  # type: ignore[arg-type]
    failed = run_item(account_items.health_item("R1"), api=api, http=http)
    assert classify(failed, ORACLES, SERVICE) is Outcome.FAILED

    def broken(*_: Any, **__: Any) -> Any:
        raise HarnessError("the checks fixture is broken")

    checks = type("Checks", (), {"wrong_method_problems": staticmethod(broken)})()
    errored = run_item(account_items.wrong_method_item("R2", caller="alice"), api=api, http=http, service=None, checks=checks,
                       alice=Account("1", "alice", "pw", "t"))
    assert isinstance(errored.value, HarnessError) and classify(errored, ORACLES, SERVICE) is Outcome.ERROR


def test_token_required_item_sends_every_call_with_each_header_and_fails_on_the_first_answer_that_is_not_401() -> None:
    refused = ScriptedSession({("GET", "/a"): (401, {"error": "unauthorized"}), ("POST", "/b"): (401, {"error": "unauthorized"})})
    made: list[Any] = []
    item = account_items.token_required_item("R4", name="test_needs_a_token", setup=lambda values: "thing", after=lambda values, thing: made.append(thing),
                                             calls=lambda values, thing: [("GET", "/a", None), ("POST", "/b", {"x": thing})])
    assert item.__name__ == "test_needs_a_token" and list(inspect.signature(item).parameters) == ["api", "http", "headers"]
    marks = {mark.name: mark for mark in item.pytestmark}  # type: ignore[attr-defined]
    assert marks["parametrize"].kwargs["ids"] == ["missing", "basic", "unknown"] and marks["category"].args == ("authorization",)
    item(api=AccountsApi(refused, ENV), http=refused, headers={"Authorization": "Bearer forged-token"})  # type: ignore[arg-type]
    assert [(m, p, j, h) for m, p, j, h in refused.sent] == [("GET", "/a", None, {"Authorization": "Bearer forged-token"}),
                                                             ("POST", "/b", {"x": "thing"}, {"Authorization": "Bearer forged-token"})]
    assert made == ["thing"]
    open_door = ScriptedSession({("GET", "/a"): (200, {}), ("POST", "/b"): (401, {"error": "unauthorized"})})
    failed = run_item(item, api=AccountsApi(open_door, ENV), http=open_door, headers={})  # type: ignore[arg-type]
    assert "GET /a with no header: expected 401" in str(failed.value) and classify(failed, ORACLES, SERVICE) is Outcome.FAILED


def test_health_item_exact_refuses_extra_members_the_default_does_not() -> None:
    http = ScriptedSession({("GET", "/health"): (200, {"status": "ok", "db": "up"})})
    api = AccountsApi(http, ENV)  # type: ignore[arg-type]
    account_items.health_item("R1")(api=api, http=http)
    failed = run_item(account_items.health_item("R1", exact=True), api=api, http=http)
    assert isinstance(failed.value, AssertionError) and classify(failed, ORACLES, SERVICE) is Outcome.FAILED


def test_register_item_wants_the_user_back_without_the_password() -> None:
    checks = type("Checks", (), {"password_leaks": staticmethod(lambda text, password: ["the password itself"] if password in text else [])})()
    honest = users_service()
    account_items.register_item("R2", string_id=True)(api=None, http=honest, checks=checks)
    assert honest.sent[0][:2] == ("POST", "/users") and honest.sent[0][2]["username"].startswith("reg_")
    leaky = ScriptedSession({("POST", "/users"): (201, lambda sent: {**sent, "id": "1"})})
    failed = run_item(account_items.register_item("R2"), api=None, http=leaky, checks=checks)
    assert "reveals ['the password itself']" in str(failed.value)


def test_json_object_body_item_posts_the_raw_body_to_each_path_as_the_caller() -> None:
    http = ScriptedSession({("POST", "/a"): (422, {"error": "validation_error", "fields": []}), ("POST", "/b"): (201, {"id": 1})})
    item = account_items.json_object_body_item("R9", caller="alice", paths=("/a", "/b"), raws={"array": "[]"})
    assert list(inspect.signature(item).parameters) == ["api", "http", "alice", "raw"]
    failed = run_item(item, api=AccountsApi(http, ENV), http=http, alice=Account("1", "alice", "pw", "t"), raw="[]")  # type: ignore[arg-type]
    assert "POST /b with '[]': expected 422" in str(failed.value)
    assert [h for *_, h in http.sent] == [{"Authorization": "Bearer t", "Content-Type": "application/json"}] * 2


def test_task_checks_fixture_adds_a_tasks_own_members_to_the_shared_checks() -> None:
    from pytest_backendbench.http.checks import INJECTION_TEXTS, injection_texts, oracle_checks, table_ids

    fixture = accounts.task_checks_fixture(task_ids=table_ids("bills", "abc"), injection_texts=injection_texts("bills"))
    checks = fixture.__wrapped__(oracle_checks())  # the fixture's function (pytest keeps it for tools like this)
    assert checks.task_ids == ("1%3B%20DROP%20TABLE%20bills", "99999999999999999999999", "-1", "abc")
    assert checks.injection_texts[0] == "Robert'); DROP TABLE bills;--" and checks.injection_texts[1:] == INJECTION_TEXTS[1:]
    assert checks.password_leaks is oracle_checks().password_leaks


def test_timestamps_name_instants_and_say_what_is_not_utc() -> None:
    from pytest_backendbench.http.timestamps import instant, is_utc, utc_problem

    assert instant("2031-01-01T10:00:00Z") == instant("2031-01-01T12:00:00+02:00") is not None
    assert instant("2031-01-01T10:00:00") is None and instant(5) is None and instant("soon") is None
    assert is_utc("2031-01-01T10:00:00z") and is_utc("2031-01-01T10:00:00+00:00") and not is_utc("2031-01-01T10:00:00+01:00")
    assert "offset 1:00:00" in str(utc_problem("2031-01-01T10:00:00+01:00", "created_at"))


def test_rfc3339_utc_problems_want_a_t_and_utc() -> None:
    from pytest_backendbench.http.timestamps import rfc3339_utc_problems

    good = [("a", "2025-03-01T12:00:00.123Z"), ("b", "2025-03-01t12:00:00+00:00")]
    assert rfc3339_utc_problems(good) == []
    assert rfc3339_utc_problems([("c", "2025-03-01 12:00:00Z"), ("d", "2025-03-01T12:00:00+01:00"), ("e", "yesterday"), ("f", None)]) == [
        "c = '2025-03-01 12:00:00Z' is not an RFC 3339 date-time in UTC",
        "d = '2025-03-01T12:00:00+01:00' is not an RFC 3339 date-time in UTC",
        "e = 'yesterday' is not RFC 3339 like 2025-03-01T12:00:00.123Z",
        "f = None is not RFC 3339 like 2025-03-01T12:00:00.123Z",
    ]
