"""Oracle support for accounts: logged-in callers, the bootstrap administrator, role fixtures.

Most bundled tasks have users who log in for a bearer token, and many have an administrator
whose credentials task.yaml promises the service (``env``). ``AccountsApi`` is the ``Api`` of
such a task: it logs in, registers or creates users and holds the administrator, reading the
credentials from the task the item runs (``Task.env``), so no oracle parses task.yaml itself.
A task's conftest.py subclasses it, names its own paths and fields in class attributes, and
builds its fixtures with ``api_fixture``, ``admin_fixture`` and ``role_fixture``.

Like http/api.py this module declares itself oracle support: an ``AssertionError`` or
``pytest.fail`` raised here is the oracle's verdict on the candidate's answer. An answer that
lacks a field a setup step reads fails the item too (``field``), as the oracle's own code did
when it read the field itself.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
import requests

from ..errors import HarnessError
from .api import Api, unique
from .secrets import secret_check

__oracle_support__ = True
"""Read by outcomes.exception_origin: assertions raised here are the oracle's verdict."""

ApiT = TypeVar("ApiT", bound="AccountsApi")


def fresh_password() -> str:
    """A fresh valid password (35 characters: inside every bundled spec's limits)."""
    return "pw-" + uuid.uuid4().hex


def field(answer: Any, *keys: str, what: str) -> Any:
    """``answer[k1][k2]...``, or fail the item naming the setup step whose answer lacks it."""
    __tracebackhide__ = True
    value = answer
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            pytest.fail(f"setup step '{what}' answered no {'.'.join(keys)!r}: {str(answer)[:300]}", pytrace=False)
        value = value[key]
    return value


def bootstrap_credentials(env: Mapping[str, str], *keys: str) -> tuple[str, ...]:
    """The values of ``keys`` (e.g. ADMIN_USERNAME, ADMIN_PASSWORD) task.yaml's ``env`` promises."""
    missing = [key for key in keys if key not in env]
    if missing:
        raise HarnessError(f"the oracle needs {', '.join(missing)} in task.yaml's env (the bootstrap administrator's credentials); add them there")
    return tuple(str(env[key]) for key in keys)


class Bearer:
    """A caller holding a bearer ``token``: its ``headers``. A base for a task's own caller dataclass."""

    token: str

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of this caller's token."""
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class Account(Bearer):
    """A logged-in caller: a registered user, a user an administrator made, or the administrator."""

    id: Any
    username: str
    password: str
    token: str
    role: str = ""


class AccountsApi(Api):
    """``Api`` with accounts: log in, register, create users with a role, the bootstrap admin.

    A task names its own contract in the class attributes; ``admin`` logs in once per item with
    the credentials ``credential_keys`` name in task.yaml's env.
    """

    token_path = "/auth/token"
    users_path = "/users"
    name_field = "username"
    role_field = "role"
    credential_keys: tuple[str, ...] = ("ADMIN_USERNAME", "ADMIN_PASSWORD")
    admin_token_key: str | None = None
    """Where task.yaml promises the administrator a fixed token instead of credentials."""
    account_id: Callable[[Any], Any] = staticmethod(lambda value: value)
    """How a created user's ``id`` is kept (``int`` where the contract's ids are integers)."""
    staff_name_digits = 12
    """How many hex digits follow the role in the usernames ``staff`` makes."""
    errors_carry_message = False
    """Whether the spec says every error answer carries a ``message`` string besides its ``error`` code."""

    def __init__(self, http: requests.Session, env: Mapping[str, str] | None = None) -> None:
        super().__init__(http)
        self.env = dict(env or {})
        self._admin: Account | None = None

    def error(self, response: requests.Response, status: int, code: str, what: str) -> dict[str, Any]:
        """``Api.error``, and a ``message`` string in the body where ``errors_carry_message``."""
        __tracebackhide__ = True
        body = super().error(response, status, code, what)
        if self.errors_carry_message:
            assert isinstance(body.get("message"), str), f"{what}: an error answer carries a 'message' string, got {response.text[:300]}"
        return body

    def created_id(self, created: Any, what: str) -> Any:
        """The ``id`` of a created user, as ``account_id`` keeps it (fails the item when it has none or a wrong one)."""
        __tracebackhide__ = True
        value = field(created, "id", what=what)
        try:
            return self.account_id(value)
        except (TypeError, ValueError):
            pytest.fail(f"setup step '{what}' answered an id {value!r} the contract does not allow", pytrace=False)

    def bootstrap_credentials(self) -> tuple[str, ...]:
        """The administrator's credentials as task.yaml promises them to the service."""
        return bootstrap_credentials(self.env, *self.credential_keys)

    def login_answer(self, username: str, password: str, what: str = "") -> dict[str, Any]:
        """POST the token path that must answer 200; its body. (The kit calls this one, so a
        task may give ``login`` another meaning, such as ``login = AccountsApi.token``.)"""
        response = self.http.post(self.token_path, json={self.name_field: username, "password": password})
        return dict(self.ok(response, 200, what or f"log in as {username}"))

    login = login_answer

    def token(self, username: str, password: str, what: str = "") -> str:
        """A new token for the user (must succeed)."""
        what = what or f"log in as {username}"
        return str(field(self.login_answer(username, password, what), "token", what=what))

    @property
    def admin(self) -> Account:
        """The bootstrap administrator, logged in once per item (or holding ``admin_token_key``'s token)."""
        if self._admin is None and self.admin_token_key is not None:
            self._admin = Account("admin", "admin", "", bootstrap_credentials(self.env, self.admin_token_key)[0], "admin")
        if self._admin is None:
            username, password = self.bootstrap_credentials()
            body = self.login_answer(username, password)
            what = f"log in as {username}"
            self._admin = Account(field(body, "user", "id", what=what), username, password, str(field(body, "token", what=what)), "admin")
        return self._admin

    def register(self, prefix: str = "user", **extra: Any) -> Account:
        """A user who registered themselves (a fresh username), logged in."""
        password = fresh_password()
        created = self.ok(self.http.post(self.users_path, json={self.name_field: unique(prefix), "password": password, **extra}), 201, "register a user")
        username = str(field(created, self.name_field, what="register a user"))
        return Account(self.created_id(created, "register a user"), username, password, self.token(username, password))

    def staff_username(self, role: str) -> str:
        """The fresh username ``staff`` gives a user of ``role``."""
        return unique(role, length=self.staff_name_digits)

    def staff(self, role: str, password: str | None = None, **fields: Any) -> Account:
        """A new user with ``role`` (and ``fields``), created by the bootstrap administrator, logged in."""
        username, password = self.staff_username(role), password or fresh_password()
        body = {self.name_field: username, "password": password, self.role_field: role, **fields}
        created = self.ok(self.http.post(self.users_path, json=body, headers=self.admin.headers), 201, f"create a {role}")
        return Account(self.created_id(created, f"create a {role}"), username, password, self.token(username, password), role)

    def relogin(self, account: Account) -> Account:
        """The same user with a fresh token (after a restart, say)."""
        return Account(account.id, account.username, account.password, self.token(account.username, account.password), account.role)


def api_fixture(api_class: type[ApiT]) -> Any:
    """The ``api`` fixture of a task: ``api_class`` bound to the service and the task's env."""

    @pytest.fixture(name="api")
    def api(http: requests.Session, service: Any) -> ApiT:
        """Setup and inspection helpers bound to the service under test."""
        return api_class(http, service.task_run.task.env)

    return api


@pytest.fixture(name="admin")
def admin_fixture(api: AccountsApi) -> Account:
    """The bootstrap administrator."""
    return api.admin


@pytest.fixture(name="task_env")
def task_env_fixture(service: Any) -> dict[str, str]:
    """The environment task.yaml gives the service (credentials an item logs in with itself)."""
    return dict(service.task_run.task.env)


def role_fixture(name: str, make: Callable[[Any], Any], doc: str) -> Any:
    """A fixture ``name`` whose value ``make(api)`` builds (a fresh user of a role, say)."""

    def fixture(api: Any) -> Any:
        return make(api)

    fixture.__doc__ = doc
    return pytest.fixture(name=name)(fixture)


def staff_fixtures(*roles: str) -> tuple[Any, ...]:
    """One fixture per role (named after it), each a fresh user of that role made by the administrator."""
    return tuple(role_fixture(role, functools.partial(_staff_of, role=role), f"A fresh {role}.") for role in roles)


def _staff_of(api: AccountsApi, role: str) -> Account:
    return api.staff(role)


def leak_checks_fixture(*, env_passwords: tuple[str, ...] = ()) -> Any:
    """The ``http_response_checks`` fixture of a task whose spec says no answer carries a password
    or anything derived from it (http/secrets.py; CWE-200). Passwords sent through the session are
    looked for anyway; ``env_passwords`` names task.yaml env keys of ones set up outside it, such
    as the administrator's."""

    @pytest.fixture(name="http_response_checks")
    def http_response_checks(service: Any) -> list[Any]:
        """No answer of any item carries a password or a hash of one (CWE-200)."""
        if not env_passwords:
            return [secret_check()]
        known = bootstrap_credentials(service.task_run.task.env, *env_passwords)
        return [secret_check(lambda: known)]

    return http_response_checks


def task_checks_fixture(**own: Any) -> Any:
    """The ``checks`` fixture of a task with checks of its own: the shared ones (the package's
    ``checks`` fixture, http/checks.py) with ``own``'s members set or replaced (``restart``,
    ``task_ids``, ``injection_texts``, ...)."""

    @pytest.fixture(name="checks")
    def checks(checks: Any) -> Any:
        """The checks shared by the bundled oracles, with this task's own."""
        for name, value in own.items():
            setattr(checks, name, value)
        return checks

    return checks


def restart(service: Any, http: requests.Session) -> None:
    """Restart the service (the database stays) and drop the session's pooled connections to the old process."""
    service.restart()
    http.close()
