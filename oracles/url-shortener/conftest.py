"""Shared setup for the url-shortener oracle: users, links, visits.

Every item registers its own users and creates its own links. Custom slugs always carry a
uuid fragment because slugs are global across the shared service. A setup step that does not
answer as the contract says fails the item with a readable message.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import requests


def unique(prefix: str) -> str:
    """A fresh name that is also a valid username and slug."""
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


def instant(value: str) -> datetime:
    """Parse an RFC 3339 timestamp from a response (Z or offset) into an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))


def rfc3339(moment: datetime) -> str:
    """An RFC 3339 timestamp with a Z suffix."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def in_days(days: float) -> str:
    """A timestamp ``days`` from now (negative: in the past)."""
    return rfc3339(datetime.now(timezone.utc) + timedelta(days=days))


@dataclass
class User:
    """A registered, logged-in user."""

    id: str
    username: str
    password: str
    token: str

    @property
    def headers(self) -> dict[str, str]:
        """The Authorization header of this user's token."""
        return {"Authorization": f"Bearer {self.token}"}


class Api:
    """Setup and inspection helpers on top of the ``http`` fixture."""

    brief = staticmethod(brief)
    instant = staticmethod(instant)
    in_days = staticmethod(in_days)
    rfc3339 = staticmethod(rfc3339)
    unique = staticmethod(unique)

    def __init__(self, http: requests.Session) -> None:
        self.http = http

    def ok(self, response: requests.Response, status: int, what: str) -> Any:
        """The JSON body of a setup response, or fail the item when the status is not ``status``."""
        __tracebackhide__ = True
        if response.status_code != status:
            pytest.fail(f"setup step '{what}' expected {status}: {brief(response)}", pytrace=False)
        if status == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            pytest.fail(f"setup step '{what}' answered a body that is not JSON: {brief(response)}", pytrace=False)

    def error(self, response: requests.Response, status: int, code: str, what: str) -> dict[str, Any]:
        """Assert an error answer: its status and its documented ``error`` code."""
        __tracebackhide__ = True
        assert response.status_code == status, f"{what}: expected {status} ({code}), got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            pytest.fail(f"{what}: the {status} answer is not JSON: {brief(response)}", pytrace=False)
        assert isinstance(body, dict) and body.get("error") == code, f"{what}: expected error code {code!r}, got {response.text[:300]}"
        return body

    def validation_problem(self, response: requests.Response, fields: list[str] | None, what: str, also: tuple[str, ...] = ()) -> str | None:
        """Why ``response`` is not a 422 naming exactly ``fields`` (order-free), or None when it is.

        ``also`` names fields whose validity depends on an invalid one (a subject for an unknown
        channel): the spec leaves open whether they are listed too, so either reading passes.
        """
        if response.status_code != 422:
            return f"{what}: expected 422, got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            return f"{what}: the 422 answer is not JSON: {brief(response)}"
        if not isinstance(body, dict) or body.get("error") != "validation_error":
            return f"{what}: expected error code 'validation_error', got {response.text[:300]}"
        got = body.get("fields")
        if not isinstance(got, list):
            return f"{what}: a 422 body needs a 'fields' list, got {got!r}"
        if fields is not None and not (set(fields) <= set(map(str, got)) <= set(fields) | set(also) and len(got) == len(set(map(str, got)))):
            return f"{what}: 422 should list fields {sorted(fields)}, got {got!r}"
        return None

    def newest_first_problem(self, items: list[dict[str, Any]], expected: list[Any], key: str, stamp: str, what: str) -> str | None:
        """Why ``items`` are not ``expected`` (values of ``key``, newest first), or None.

        Entries recorded within one timestamp tick (a millisecond, or a second at second
        resolution) tie: the spec orders by time, so tied entries may come in either order.
        """
        got = [i.get(key) for i in items]
        if sorted(map(str, got)) != sorted(map(str, expected)):
            return f"{what}: expected {expected}, got {got}"
        when = {str(i.get(key)): self.instant(str(i.get(stamp))) for i in items}
        for a_index, a in enumerate(expected):
            for b in expected[a_index + 1:]:
                if when[str(a)] != when[str(b)] and got.index(a) > got.index(b):
                    return f"{what}: {a} is newer than {b} and must come first: {got}"
        return None

    def assert_no_problems(self, problems: list[str | None], headline: str) -> None:
        """Fail with every collected problem at once."""
        __tracebackhide__ = True
        found = [p for p in problems if p]
        assert not found, headline + ":\n" + "\n".join(found)

    # ---------------------------------------------------------------- users

    def user(self, prefix: str = "user") -> User:
        """A registered user with a token."""
        password = "pw-" + uuid.uuid4().hex
        created = self.ok(self.http.post("/users", json={"username": unique(prefix), "password": password}), 201, "register a user")
        return User(created["id"], created["username"], password, self.login(created["username"], password))

    def login(self, username: str, password: str) -> str:
        """A new token."""
        body = self.ok(self.http.post("/auth/token", json={"username": username, "password": password}), 200, "log in")
        return str(body["token"])

    # ---------------------------------------------------------------- links and visits

    def link(self, user: User, url: str | None = None, **fields: Any) -> dict[str, Any]:
        """A new link of ``user``."""
        body = {"url": url or f"https://example.com/{uuid.uuid4().hex}", **fields}
        return self.ok(self.http.post("/links", json=body, headers=user.headers), 201, f"create a link {body}")

    def get_link(self, user: User, link: dict[str, Any]) -> dict[str, Any]:
        """Read a link back (must exist)."""
        return self.ok(self.http.get(f"/links/{link['id']}", headers=user.headers), 200, "read a link")

    def patch(self, user: User, link: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """Update a link; the update must succeed."""
        return self.ok(self.http.patch(f"/links/{link['id']}", json=fields, headers=user.headers), 200, f"update a link with {fields}")

    def follow(self, slug: str, referer: str | None = None, **headers: str) -> requests.Response:
        """GET /r/{slug} without following the redirect."""
        if referer is not None:
            headers["Referer"] = referer
        return self.http.get(f"/r/{slug}", headers=headers, allow_redirects=False)

    def visit(self, link: dict[str, Any], referer: str | None = None) -> None:
        """Follow a link that must redirect."""
        __tracebackhide__ = True
        r = self.follow(link["slug"], referer)
        if r.status_code != 302:
            pytest.fail(f"setup step 'follow /r/{link['slug']}' expected 302: {brief(r)}", pytrace=False)

    def links(self, user: User, **params: Any) -> dict[str, Any]:
        """One page of the caller's links."""
        return dict(self.ok(self.http.get("/links", params=params, headers=user.headers), 200, f"list links with {params}"))

    def link_ids(self, user: User, **params: Any) -> list[str]:
        """Ids of one page of the caller's links."""
        return [x["id"] for x in self.links(user, **params)["items"]]

    def stats(self, user: User, link: dict[str, Any]) -> dict[str, Any]:
        """GET /links/{id}/stats."""
        return dict(self.ok(self.http.get(f"/links/{link['id']}/stats", headers=user.headers), 200, "read link stats"))

    def visits(self, user: User, link: dict[str, Any], **params: Any) -> dict[str, Any]:
        """One page of a link's visits."""
        response = self.http.get(f"/links/{link['id']}/visits", params=params, headers=user.headers)
        return dict(self.ok(response, 200, "list visits"))

    def tags(self, user: User) -> list[tuple[str, int]]:
        """(tag, links) pairs from GET /tags."""
        items = self.ok(self.http.get("/tags", headers=user.headers), 200, "list tags")["items"]
        return [(i.get("tag"), i.get("links")) for i in items]


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup and inspection helpers bound to the service under test."""
    return Api(http)


@pytest.fixture
def alice(api: Api) -> User:
    """A fresh user."""
    return api.user("alice")


@pytest.fixture
def bob(api: Api) -> User:
    """Another fresh user, for isolation checks."""
    return api.user("bob")


# ---------------------------------------------------------------- checks shared by the items


def password_leaks(text: str, password: str) -> list[str]:
    """Forms of ``password`` found in ``text``: its value, unsalted digests of it, or a salted hash.

    The spec forbids revealing the password, not the word "password": a key of that name is
    fine, its value or a hash of it is not.
    """
    import base64
    import hashlib
    import re

    found = [] if password not in text else ["the password itself"]
    raw = password.encode()
    for name in ("md5", "sha1", "sha256", "sha512"):
        digest = hashlib.new(name, raw)
        if digest.hexdigest() in text.lower() or base64.b64encode(digest.digest()).decode() in text:
            found.append(f"its {name} digest")
    if base64.b64encode(raw).decode() in text:
        found.append("its base64 form")
    if re.search(r"\$(2[abxy]|argon2(id|i|d)|pbkdf2[-_a-z0-9]*|scrypt|[156])\$", text):
        found.append("a password-hash string")
    return found


def documented(value: Any, expected: dict[str, Any]) -> Any:
    """``value`` restricted to the keys of ``expected``: responses may carry extra fields."""
    if not isinstance(value, dict):
        return value
    return {key: documented(value.get(key), sub) if isinstance(sub, dict) else value.get(key) for key, sub in expected.items()}


def concurrently(call: Any, args: list[Any], timeout_s: float = 30.0) -> list[Any]:
    """``call(arg)`` for every ``arg`` at once; the results in order.

    An exception in one call (a request timeout, a refused connection) is raised here, in the
    item, instead of dying silently inside a thread: the item then ends as the timeout or crash
    it is, never as a confusing count of statuses.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Barrier(len(args), timeout=timeout_s)

    def released(arg: Any) -> Any:
        gate.wait()
        return call(arg)

    with ThreadPoolExecutor(max_workers=len(args)) as pool:
        futures = [pool.submit(released, arg) for arg in args]
        return [future.result(timeout=timeout_s) for future in futures]


def deep_json(depth: int, leaf: str = '"x"') -> str:
    """A JSON array nested ``depth`` levels deep, built as text (no recursion needed)."""
    return "[" * depth + leaf + "]" * depth


def hostile_body_problems(service: Any, timeout_s: float, method: str, path: str, headers: dict[str, str], body: dict[str, Any], field: str) -> list[str]:
    """Send ``body`` to ``path`` oversized (in ``field``) and deeply nested; what went wrong.

    The spec: over 1 MiB gets 413 or 422, deeper than 32 levels gets 422, and the service keeps
    answering. Sent with a plain session: a 413 is not in every contract, and these requests are
    about limits, not about the contract.
    """
    import json

    import requests

    problems: list[str] = []
    url = service.base_url + path
    sent = {"Content-Type": "application/json", **headers}
    big = json.dumps({**body, field: "x" * (1_048_576 + 64)})
    nested_ignored = json.dumps(body)[:-1] + ', "nested_extra": ' + deep_json(40) + "}"
    nested_deep = json.dumps(body)[:-1] + f', "{field}": ' + deep_json(20_000) + "}"
    for label, data, allowed in (
        ("a body over 1 MiB", big, (413, 422)),
        ("a body nested 40 levels deep (in a field the contract does not define)", nested_ignored, (422,)),
        ("a body nested 20000 levels deep", nested_deep, (413, 422)),
    ):
        try:
            r = requests.request(method, url, data=data.encode(), headers=sent, timeout=timeout_s)
        except requests.RequestException as err:
            problems.append(f"{method} {path} with {label}: no answer ({type(err).__name__}: {err})")
            continue
        if r.status_code not in allowed:
            problems.append(f"{method} {path} with {label}: expected {' or '.join(map(str, allowed))}, got {r.status_code} {r.text[:150]}")
        try:
            health = requests.get(service.base_url + "/health", timeout=timeout_s)
            if health.status_code != 200:
                problems.append(f"after {label}: GET /health answered {health.status_code}")
        except requests.RequestException as err:
            problems.append(f"after {label}: the service no longer answers GET /health ({type(err).__name__})")
    return problems


TRAVERSAL_IDS = ("..%2f..%2fhealth", "%2e%2e%2f%2e%2e%2fhealth", "..%5c..%5chealth", "%2A", "1%27%20OR%20%271%27%3D%271", "%00")


def traversal_problems(service: Any, timeout_s: float, prefix: str, headers: dict[str, str], suffix: str = "") -> list[str]:
    """GET ``prefix + <hostile id> + suffix`` for ids that try to climb out of the path; each must be 404.

    Sent as raw, already-encoded paths (requests would otherwise normalise the dot segments).
    """
    import requests

    problems = []
    for hostile in TRAVERSAL_IDS:
        url = f"{service.base_url}{prefix}{hostile}{suffix}"
        request = requests.Request("GET", url, headers=headers).prepare()
        request.url = url
        try:
            with requests.Session() as session:
                r = session.send(request, timeout=timeout_s, allow_redirects=False)
        except requests.RequestException as err:
            problems.append(f"GET {prefix}{hostile}{suffix}: no answer ({type(err).__name__})")
            continue
        if r.status_code != 404:
            problems.append(f"GET {prefix}{hostile}{suffix}: expected 404 (an id naming nothing), got {r.status_code} {r.text[:120]}")
    return problems


MALFORMED_TOKENS = ("Bearer", "Bearer ", "Token {token}", "{token}", "Bearer {token}x", "Bearer x{token}", "Bearer {token} {token}",
                    "Bearer ' OR '1'='1", "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiIxIn0.", "Basic YWRtaW46YWRtaW4=")


def token_problems(http: Any, method: str, path: str, token: str, body: Any = None) -> list[str]:
    """Send the request with malformed or tampered Authorization headers; each must be 401."""
    problems = []
    for template in MALFORMED_TOKENS:
        header = template.format(token=token)
        r = http.request(method, path, json=body, headers={"Authorization": header})
        shown = header.replace(token, "<token>")
        if r.status_code != 401:
            problems.append(f"{method} {path} with Authorization {shown!r}: expected 401, got {r.status_code} {r.text[:120]}")
        elif (r.headers.get("Content-Type") or "").split(";")[0].strip() == "application/json" and r.json().get("error") != "unauthorized":
            problems.append(f"{method} {path} with Authorization {shown!r}: expected error 'unauthorized', got {r.text[:120]}")
    return problems


INJECTION_TEXTS = ("Robert'); DROP TABLE users;--", "' OR '1'='1", '{"$gt": ""}', "%_%", "*", "$where: 1 == 1", "<script>alert(1)</script>", "\\x00 ;--")


def answer_problems(response: Any, status: int, what: str) -> list[str]:
    """Conventions every answer follows: JSON bodies say ``application/json``; a 204 has no body."""
    problems = []
    if response.status_code != status:
        return [f"{what}: expected {status}, got {response.status_code} {response.text[:150]}"]
    media = (response.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if status == 204:
        if response.content:
            problems.append(f"{what}: a 204 answer has no body, got {response.content[:80]!r}")
    elif media != "application/json":
        problems.append(f"{what}: a JSON answer needs Content-Type application/json, got {media or 'none'!r}")
    return problems


@pytest.fixture
def checks() -> Any:
    """The shared checks (``password_leaks``, ``documented``, ``concurrently``) for items that want them."""
    import types

    return types.SimpleNamespace(
        password_leaks=password_leaks, documented=documented, concurrently=concurrently, deep_json=deep_json,
        hostile_body_problems=hostile_body_problems, traversal_problems=traversal_problems, token_problems=token_problems,
        injection_texts=INJECTION_TEXTS, answer_problems=answer_problems,
    )
