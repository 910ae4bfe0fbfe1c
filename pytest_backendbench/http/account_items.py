"""Oracle items many bundled tasks share, parametrised by a task's own paths, fields and callers.

A task's test module binds one under the item's name, so node ids stay the module's own::

    test_a_method_a_path_does_not_have_gets_405 = wrong_method_item("R26", caller="alice")

``caller`` is the fixture that makes the caller, or a function of the ``api`` fixture (such as
``AccountsApi.register``). Marks the module sets (tier, category) apply as to any function.

The items are oracle code kept in the package: an assertion here is the oracle's verdict on the
candidate (``__oracle_support__``), and so is any other exception raised by an item's own code
while it reads an answer (a list where an object was promised), as it was when the item lived in
the oracle module. An exception raised deeper in the harness stays the harness's.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ..errors import HarnessError
from .api import brief, unique
from .secrets import PASSWORD_EDGES, account_findings, long_password

__oracle_support__ = True
"""Read by outcomes.exception_origin: assertions raised here are the oracle's verdict."""

PACKAGE_DIR = Path(__file__).resolve().parents[1]
Caller = str | Callable[[Any], Any]
"""Who sends an item's requests: a fixture name, or a function of the ``api`` fixture."""

ORACLE_BUGS = (HarnessError, NameError, ImportError, SyntaxError)
"""Exceptions of a broken item or harness, never converted into the candidate's failure."""


def raised_by_items(err: BaseException) -> bool:
    """Whether the innermost package frame of ``err``'s traceback is this module's (an item's own code)."""
    innermost = None
    tb = err.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(PACKAGE_DIR):
            innermost = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return innermost is not None and Path(innermost).resolve() == Path(__file__).resolve()


def oracle_item(body: Callable[..., None], fixtures: Sequence[str], marks: Sequence[pytest.MarkDecorator] = ()) -> Callable[..., None]:
    """A test function that asks pytest for ``fixtures`` (in this order) and runs ``body`` with them.

    An exception ``body`` itself raises while reading an answer fails the item, as in an oracle
    module; one raised deeper in the harness, or a broken item's, is left as it is.
    """

    def item(**values: Any) -> None:
        __tracebackhide__ = True
        try:
            body(**values)
        except (AssertionError, *ORACLE_BUGS):
            raise
        except Exception as err:
            if not raised_by_items(err):
                raise
            raise AssertionError(f"the answer could not be read: {type(err).__name__}: {err}") from err

    item.__name__, item.__qualname__, item.__doc__ = body.__name__, body.__qualname__, body.__doc__
    item.__signature__ = inspect.Signature([inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY) for name in fixtures])  # type: ignore[attr-defined]
    for mark in marks:
        item = mark(item)
    return item


def _caller(caller: Caller, values: dict[str, Any]) -> Any:
    return values[caller] if isinstance(caller, str) else caller(values["api"])


def _fixtures(base: Sequence[str], *callers: Caller) -> list[str]:
    return [*base, *dict.fromkeys(c for c in callers if isinstance(c, str) and c not in base)]


def wrong_method_item(*requirements: str, caller: Caller, path: str = "/health") -> Callable[..., None]:
    """spec.md's Errors: a path that exists but not with the request's method gets 405
    (``method_not_allowed``); ``path`` still answers GET with 200 afterwards."""

    def body(**values: Any) -> None:
        http = values["http"]
        headers = _caller(caller, values).headers
        problems = values["checks"].wrong_method_problems(values["service"], http.timeout_s, path, headers)
        assert not problems, "a method the path does not have:\n" + "\n".join(problems)
        assert http.get(path).status_code == 200, f"GET {path} still answers 200"

    body.__name__ = body.__qualname__ = "test_a_method_a_path_does_not_have_gets_405"
    return oracle_item(body, _fixtures(["api", "http", "service", "checks"], caller),
                       [pytest.mark.requirement(*requirements), pytest.mark.category("api_surface")])


def empty_paging_item(*requirements: str, caller: Caller, path: str, other_path: str | Callable[[Any, Any], str] | None = None,
                      other_caller: Caller | None | bool = True) -> Callable[..., None]:
    """spec.md's Lists: an empty ``limit=`` or ``offset=`` is invalid (422 naming it); only an
    absent parameter takes its default (20, 0). ``other_path`` is a second list (or a function of
    the api and the caller that sets one up first), checked with ``limit=&offset=0`` as
    ``other_caller`` (True: the same caller; None: without a token)."""

    def body(**values: Any) -> None:
        api, http = values["api"], values["http"]
        who = _caller(caller, values)
        headers = who.headers
        other = other_path(api, who) if callable(other_path) else other_path
        problems = [
            api.validation_problem(http.get(path, params={"limit": ""}, headers=headers), ["limit"], f"GET {path}?limit="),
            api.validation_problem(http.get(path, params={"offset": ""}, headers=headers), ["offset"], f"GET {path}?offset="),
        ]
        if other is not None:
            other_headers = headers if other_caller is True else None if other_caller is None or other_caller is False else _caller(other_caller, values).headers
            problems.append(api.validation_problem(http.get(other, params={"limit": "", "offset": "0"}, headers=other_headers), ["limit"],
                                                   f"GET {other}?limit=&offset=0"))
        found = [p for p in problems if p]
        assert not found, "empty paging values:\n" + "\n".join(found)
        page = api.ok(http.get(path, headers=headers), 200, "list with no paging parameters")
        assert (page.get("limit"), page.get("offset")) == (20, 0), f"absent parameters take their defaults (20, 0): {page}"

    body.__name__ = body.__qualname__ = "test_an_empty_limit_or_offset_is_invalid_not_the_default"
    extra = [other_caller] if isinstance(other_caller, str) else []
    return oracle_item(body, _fixtures(["api", "http"], caller, *extra), [pytest.mark.requirement(*requirements), pytest.mark.category("validation")])


NO_VALID_TOKEN: dict[str, dict[str, str]] = {
    "missing": {}, "basic": {"Authorization": "Basic cm9vdDpyb290"}, "unknown": {"Authorization": "Bearer forged-token"},
}
"""Headers of callers without a valid token (by param id): none, another scheme, a bearer token never issued."""


def token_required_item(*requirements: str, name: str, calls: Callable[[dict[str, Any], Any], Iterable[tuple[str, str, Any]]],
                        fixtures: Sequence[str] = ("api", "http", "headers"), headers: Mapping[str, dict[str, str]] = NO_VALID_TOKEN,
                        setup: Callable[[dict[str, Any]], Any] | None = None, after: Callable[[dict[str, Any], Any], None] | None = None,
                        unnamed: str = "no header") -> Callable[..., None]:
    """spec.md's authentication: every call of ``calls(values, made)`` ((method, path, JSON body))
    sent with each of ``headers`` (the param ``headers``) gets 401 ``unauthorized``. ``setup(values)``
    first makes what the calls name (``made``); ``after(values, made)`` then checks that the refused
    calls changed nothing. ``fixtures`` are the item's, in the task's order, ``headers`` among them."""

    def body(**values: Any) -> None:
        api, http, sent = values["api"], values["http"], values["headers"]
        made = setup(values) if setup is not None else None
        for method, path, json_body in calls(values, made):
            api.error(http.request(method, path, json=json_body, headers=sent), 401, "unauthorized", f"{method} {path} with {sent or unnamed}")
        if after is not None:
            after(values, made)

    body.__name__ = body.__qualname__ = name
    return oracle_item(body, list(fixtures), [pytest.mark.requirement(*requirements), pytest.mark.category("authorization"),
                                              pytest.mark.parametrize("headers", list(headers.values()), ids=list(headers))])


def register_item(*requirements: str, name: str = "test_register_returns_the_user_without_password", fixtures: Sequence[str] = ("api", "http", "checks"),
                  prefix: str = "reg", password: str | None = None, string_id: bool = False, created_at: bool = False) -> Callable[..., None]:
    """spec.md's registration: POST /users with a fresh username answers 201 with the user (that
    username, an id: a string where ``string_id``; a ``created_at`` string where ``created_at``) and
    no form of the password (CWE-200). ``password`` is the one sent (a fresh one by default)."""

    def body(**values: Any) -> None:
        username, secret = unique(prefix, length=10), password or "secret-" + uuid.uuid4().hex
        r = values["http"].post("/users", json={"username": username, "password": secret})
        assert r.status_code == 201, f"registering a new user: {brief(r)}"
        user = r.json()
        assert user.get("username") == username and user.get("id") and (isinstance(user["id"], str) or not string_id), f"its username and id: {user}"
        assert isinstance(user.get("created_at"), str) or not created_at, f"no created_at: {user}"
        leaks = values["checks"].password_leaks(r.text, secret)
        assert not leaks, f"the answer reveals {leaks}: {r.text[:300]}"

    body.__name__ = body.__qualname__ = name
    return oracle_item(body, list(fixtures), [pytest.mark.requirement(*requirements), pytest.mark.category("api_surface")])


def json_object_body_item(*requirements: str, caller: str, paths: Sequence[str], raws: Mapping[str, str],
                          after: Callable[[dict[str, Any]], None] | None = None) -> Callable[..., None]:
    """spec.md's conventions: a body that is not a JSON object (param ``raw``: malformed, an array, a
    string, null) POSTed to each of ``paths`` by the fixture ``caller`` gets 422 ``validation_error``;
    ``after(values)`` then checks that nothing was created."""

    def body(**values: Any) -> None:
        api, http, raw = values["api"], values["http"], values["raw"]
        headers = {**values[caller].headers, "Content-Type": "application/json"}
        problems = [api.validation_problem(http.post(path, data=raw, headers=headers), None, f"POST {path} with {raw!r}") for path in paths]
        api.assert_no_problems(problems, "bodies that are not JSON objects were not rejected with 422")
        if after is not None:
            after(values)

    body.__name__ = body.__qualname__ = "test_body_must_be_a_json_object"
    return oracle_item(body, ["api", "http", caller, "raw"], [pytest.mark.requirement(*requirements), pytest.mark.category("validation"),
                                                              pytest.mark.parametrize("raw", list(raws.values()), ids=list(raws))])


def refused_registration_item(*requirements: str) -> Callable[..., None]:
    """A registration refused with 422 (a 7-character password) creates no user: nobody logs in with
    it and its username stays free; the registration that takes the username then keeps it (409 for
    a second one, whose password is not set)."""

    def body(**values: Any) -> None:
        api, http = values["api"], values["http"]
        username, password = api.unique("mixed"), "pw-" + uuid.uuid4().hex
        problem = api.validation_problem(http.post("/users", json={"username": username, "password": "1234567"}), ["password"],
                                         "a valid username with a 7-character password")
        assert problem is None, problem
        api.error(http.post("/auth/token", json={"username": username, "password": "1234567"}), 401, "unauthorized", "logging in as a refused registration")
        r = http.post("/users", json={"username": username, "password": password})
        assert r.status_code == 201, f"the username of a refused registration is still free: {brief(r)}"
        api.error(http.post("/users", json={"username": username, "password": "another-pass-1"}), 409, "conflict", "the taken username with a valid new password")
        api.error(http.post("/auth/token", json={"username": username, "password": "another-pass-1"}), 401, "unauthorized", "the refused password must not be set")
        answer = api.ok(http.post("/auth/token", json={"username": username, "password": password}), 200, "the first password still works")
        assert answer["user"]["id"] == r.json()["id"], f"the username still belongs to the first user: {answer['user']}"

    body.__name__ = body.__qualname__ = "test_mixed_registration_that_fails_creates_nothing"
    return oracle_item(body, ["api", "http"], [pytest.mark.requirement(*requirements), pytest.mark.category("validation")])


def password_leak_item(*requirements: str, register: Callable[[Any], dict[str, Any]] = lambda api: {}, me_path: str | None = "/me") -> Callable[..., None]:
    """spec.md's "No response ever contains a password": register (with ``register(api)``'s extra
    fields), log in, read the caller (unless ``me_path`` is None), register again and log in
    wrongly; no answer carries the password or a hash of it (CWE-200)."""

    def body(**values: Any) -> None:
        api, http = values["api"], values["http"]
        credentials = {"username": api.unique("leak"), "password": long_password()}
        found = account_findings(http, {**credentials, **register(api)}, credentials, me_path=me_path)
        steps = "register, log in, GET /me, 409 and 401" if me_path else "register, log in, 409 and 401"
        assert not found, f"{steps} answers:\n" + "\n".join(found)

    body.__name__ = body.__qualname__ = "test_no_user_answer_carries_the_password_or_its_hash"
    return oracle_item(body, ["api", "http"], [pytest.mark.requirement(*requirements), pytest.mark.cwe(200)])


def password_edge_item(*requirements: str, users_path: str = "/users", token_path: str = "/auth/token") -> Callable[..., None]:
    """A user who registered with a long password logs in with it exactly, and a password wrong
    only at one edge (``PASSWORD_EDGES``: bcrypt's 72 bytes, case, spaces, a prefix) gets 401 (CWE-287)."""

    def body(**values: Any) -> None:
        api, http, edge = values["api"], values["http"], values["edge"]
        credentials = {"username": api.unique("edge"), "password": long_password()}
        api.ok(http.post(users_path, json=credentials), 201, "register")
        wrong = {**credentials, "password": PASSWORD_EDGES[edge](credentials["password"])}
        api.error(http.post(token_path, json=wrong), 401, "unauthorized", f"login with the password {edge}")
        api.ok(http.post(token_path, json=credentials), 200, "login with the exact password")

    body.__name__ = body.__qualname__ = "test_a_password_wrong_only_at_its_edge_gets_401"
    return oracle_item(body, ["api", "http", "edge"], [pytest.mark.requirement(*requirements), pytest.mark.cwe(287),
                                                         pytest.mark.parametrize("edge", sorted(PASSWORD_EDGES))])


def health_item(*requirements: str, name: str = "test_health_needs_no_authentication", fixtures: Sequence[str] = ("api", "http"),
                exact: bool = False) -> Callable[..., None]:
    """spec.md's Running: GET /health answers 200 ``{"status": "ok"}`` without a token (that body and
    nothing else where ``exact``). ``fixtures`` are those the item asks for (``http`` alone where the
    task's ``api`` fixture logs in first)."""

    def body(**values: Any) -> None:
        r = values["http"].get("/health")
        assert r.status_code == 200, f"GET /health: {brief(r)}"
        answer = r.json()
        assert (answer == {"status": "ok"}) if exact else answer.get("status") == "ok", f"GET /health answers {{'status': 'ok'}}: {brief(r)}"

    body.__name__ = body.__qualname__ = name
    return oracle_item(body, list(fixtures), [pytest.mark.requirement(*requirements), pytest.mark.category("api_surface")])


def login_validation_item(*requirements: str, cases: Sequence[tuple[Any, list[str] | None, str]], headline: str,
                          name: str = "test_login_with_missing_fields_gets_422", token_path: str = "/auth/token") -> Callable[..., None]:
    """A login body that lacks a field or gives one the wrong type gets 422 naming exactly the
    fields of each case (body, fields, what); every case is sent, and every problem reported."""

    def body(**values: Any) -> None:
        api, http = values["api"], values["http"]
        api.assert_no_problems([api.validation_problem(http.post(token_path, json=sent), fields, what) for sent, fields, what in cases], headline)

    body.__name__ = body.__qualname__ = name
    return oracle_item(body, ["api", "http"], [pytest.mark.requirement(*requirements), pytest.mark.category("validation")])


def bad_credentials_item(*requirements: str, user: str, token_path: str = "/auth/token") -> Callable[..., None]:
    """Logging in as the fixture ``user`` with a wrong password, or as a username nobody has with
    the right one, gets 401 ``unauthorized``."""

    def body(**values: Any) -> None:
        api, http, account, case = values["api"], values["http"], values[user], values["case"]
        sent = ({"username": account.username, "password": account.password + "!"} if case == "wrong-password"
                else {"username": unique("nobody", length=8), "password": account.password})
        api.error(http.post(token_path, json=sent), 401, "unauthorized", f"logging in with a {case.replace('-', ' ')}")

    body.__name__ = body.__qualname__ = "test_bad_credentials_get_401"
    return oracle_item(body, ["api", "http", user, "case"], [pytest.mark.requirement(*requirements), pytest.mark.category("authorization"),
                                                            pytest.mark.parametrize("case", ["wrong-password", "unknown-username"])])


def me_item(*requirements: str, caller: Caller, fields: Sequence[str] = ("id", "username")) -> Callable[..., None]:
    """GET /me answers 200 with the caller: its ``fields`` are the caller's own."""

    def body(**values: Any) -> None:
        who = _caller(caller, values)
        r = values["http"].get("/me", headers=who.headers)
        assert r.status_code == 200, f"GET /me: {values['api'].brief(r)}"
        got, expected = tuple(r.json().get(f) for f in fields), tuple(getattr(who, f) for f in fields)
        assert got == expected, f"GET /me should answer the caller ({', '.join(fields)}: {expected}): {r.text[:300]}"

    body.__name__ = body.__qualname__ = "test_me_answers_the_caller"
    return oracle_item(body, _fixtures(["api", "http"], caller), [pytest.mark.requirement(*requirements), pytest.mark.category("api_surface")])


def login_item(*requirements: str, caller: Caller, wrong_password: Callable[[str], str] = lambda password: password + "x",
               token_path: str = "/auth/token") -> Callable[..., None]:
    """The right password logs in (200, a bearer token, the user in the answer); a wrong password
    and an unknown username get 401 ``unauthorized``."""

    def body(**values: Any) -> None:
        api, http, who = values["api"], values["http"], _caller(caller, values)
        r = http.post(token_path, json={"username": who.username, "password": who.password})
        assert r.status_code == 200, f"logging in with the right password: {api.brief(r)}"
        answer = r.json()
        assert answer.get("token_type") == "bearer" and answer.get("token"), f"expected a bearer token: {answer}"
        assert answer.get("user", {}).get("id") == who.id, f"the login answer should carry the user: {answer}"
        wrong = {"username": who.username, "password": wrong_password(who.password)}
        api.error(http.post(token_path, json=wrong), 401, "unauthorized", "a wrong password")
        unknown = {"username": unique("ghost", length=8), "password": "whatever1"}
        api.error(http.post(token_path, json=unknown), 401, "unauthorized", "an unknown username")

    body.__name__ = body.__qualname__ = "test_login_checks_credentials"
    return oracle_item(body, _fixtures(["api", "http"], caller), [pytest.mark.requirement(*requirements), pytest.mark.category("authorization")])


def bootstrap_admin_item(*requirements: str, user: dict[str, Any], me_with_new_token: bool = False, new_token_differs: bool = False,
                         token_is_string: bool = False) -> Callable[..., None]:
    """The bootstrap administrator logs in with task.yaml's credentials: a bearer token, the user
    (its username, role ``admin`` and ``user``'s other fields) in the answer, and GET /me answering
    the same user (with the new token when ``me_with_new_token``)."""

    def body(**values: Any) -> None:
        api, http, admin = values["api"], values["http"], values["admin"]
        answer = api.login(admin.username, admin.password)
        token = answer.get("token")
        assert answer.get("token_type") == "bearer" and (isinstance(token, str) or not token_is_string) and token, f"a bearer token: {answer}"
        got = answer.get("user", {})
        expected = {"username": admin.username, "role": "admin", **user}
        assert tuple(got.get(k) for k in expected) == tuple(expected.values()), f"the bootstrap administrator: {got}"
        me = http.get("/me", headers={"Authorization": f"Bearer {answer['token']}"} if me_with_new_token else admin.headers)
        assert me.status_code == 200 and me.json().get("id") == got.get("id"), f"GET /me: {api.brief(me)}"
        if new_token_differs:
            assert answer["token"] != admin.token, "every login issues a new token"

    body.__name__ = body.__qualname__ = "test_bootstrap_admin_logs_in"
    return oracle_item(body, ["api", "http", "admin"], [pytest.mark.requirement(*requirements), pytest.mark.category("api_surface")])


def taken_username_item(*requirements: str, caller: Caller, extra: dict[str, Any] | None = None, by_admin: bool = False,
                        password: str = "another-pass", what: str = "a taken username") -> Callable[..., None]:
    """Creating (``by_admin``) or registering a user under the caller's username gets 409 ``conflict``."""

    def body(**values: Any) -> None:
        api, http, who = values["api"], values["http"], _caller(caller, values)
        headers = values["admin"].headers if by_admin else None
        sent = {"username": who.username, "password": password, **(extra or {})}
        api.error(http.post("/users", json=sent, headers=headers), 409, "conflict", what)

    body.__name__ = body.__qualname__ = "test_taken_username_gets_409"
    return oracle_item(body, _fixtures(["api", "http", *(["admin"] if by_admin else [])], caller),
                       [pytest.mark.requirement(*requirements), pytest.mark.category("state")])


TOKEN_EDGES: dict[str, Callable[[str], str]] = {
    "upper-cased": lambda t: t.upper() if t.upper() != t else t.lower(),
    "last-character-dropped": lambda t: t[:-1],
    "one-character-more": lambda t: t + "0",
    "first-half": lambda t: t[: len(t) // 2],
}
"""Tokens wrong only at an edge of a fixed token task.yaml promises: case, a prefix, one more character."""


def almost_token_item(*requirements: str, name: str, holder: str, calls: Callable[[Any], Sequence[tuple[str, str, Any]]],
                      whose: str) -> Callable[..., None]:
    """A token wrong only at one edge (``TOKEN_EDGES``) of the fixed token the fixture ``holder``
    holds gets 401 ``unauthorized`` on each of ``calls(api)`` ((method, path, JSON body)) (CWE-287)."""

    def body(**values: Any) -> None:
        api, http, token, edge = values["api"], values["http"], values[holder].token, values["edge"]
        wrong = TOKEN_EDGES[edge](token)
        assert wrong != token
        for method, path, sent in calls(api):
            api.error(http.request(method, path, json=sent, headers={"Authorization": f"Bearer {wrong}"}), 401, "unauthorized",
                      f"{method} {path} with {whose} {edge}")

    body.__name__ = body.__qualname__ = name
    return oracle_item(body, ["api", "http", holder, "edge"], [pytest.mark.requirement(*requirements), pytest.mark.cwe(287),
                                                              pytest.mark.parametrize("edge", sorted(TOKEN_EDGES))])
