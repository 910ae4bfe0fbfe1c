"""Helpers for the event-registration oracle.

Events and registrations are global in this service, so every item creates its own events
(unique titles), registers unique emails and looks only at those: no item asserts global
counts, and every item passes alone, in any order and twice in a row.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import requests

EVENT_KEYS = ("id", "title", "starts_at", "capacity", "seats_left", "created_at")
REGISTRATION_KEYS = ("id", "event_id", "name", "email", "created_at")


def unique(prefix: str) -> str:
    """A fresh title or name."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def fresh_email(domain: str = "example.org") -> str:
    """A fresh lower-case email address."""
    return f"{uuid.uuid4().hex[:12]}@{domain}"


def brief(response: requests.Response) -> str:
    """A short description of a response for failure messages."""
    return f"{response.request.method} {response.request.path_url} -> {response.status_code} {response.text[:300]}"


def instant(value: Any) -> dt.datetime | None:
    """The instant an ISO 8601 date-time string names, or None when it is not one with an offset."""
    if not isinstance(value, str):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def utc_problem(value: Any, what: str) -> str | None:
    """Why ``value`` is not an ISO 8601 date-time given in UTC (``Z`` or a zero offset), or None."""
    moment = instant(value)
    if moment is None:
        return f"{what}: expected an ISO 8601 date-time in UTC, got {value!r}"
    if moment.utcoffset() != dt.timedelta(0):
        return f"{what}: responses give timestamps in UTC, got {value!r} (offset {moment.utcoffset()})"
    return None


class Api:
    """Setup and inspection helpers on top of the ``http`` fixture; a setup step that fails fails the item."""

    brief = staticmethod(brief)
    unique = staticmethod(unique)
    fresh_email = staticmethod(fresh_email)
    instant = staticmethod(instant)
    utc_problem = staticmethod(utc_problem)

    def __init__(self, http: requests.Session) -> None:
        self.http = http

    # ---------------------------------------------------------------- answers

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
        """Assert an error answer: its status, its documented ``error`` code and a ``message`` string."""
        __tracebackhide__ = True
        assert response.status_code == status, f"{what}: expected {status} {code}, got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            pytest.fail(f"{what}: the {status} answer is not JSON: {brief(response)}", pytrace=False)
        assert isinstance(body, dict) and body.get("error") == code, f"{what}: expected error {code!r}, got {response.text[:300]}"
        assert isinstance(body.get("message"), str), f"{what}: an error answer carries a 'message' string, got {response.text[:300]}"
        return body

    def validation_problem(self, response: requests.Response, fields: list[str] | None, what: str) -> str | None:
        """Why ``response`` is not a 422 ``validation_error`` listing exactly ``fields`` (any order), or None."""
        if response.status_code != 422:
            return f"{what}: expected 422, got {brief(response)}"
        try:
            body = response.json()
        except ValueError:
            return f"{what}: the 422 answer is not JSON: {brief(response)}"
        if not isinstance(body, dict) or body.get("error") != "validation_error":
            return f"{what}: expected error 'validation_error', got {response.text[:300]}"
        got = body.get("fields")
        if not isinstance(got, list):
            return f"{what}: a 422 answer needs a 'fields' list, got {got!r}"
        if fields is not None and sorted(map(str, got)) != sorted(fields):
            return f"{what}: 422 should list fields {sorted(fields)}, got {got!r}"
        return None

    def assert_no_problems(self, problems: list[str | None], headline: str) -> None:
        """Fail with every collected problem at once."""
        __tracebackhide__ = True
        found = [p for p in problems if p]
        assert not found, headline + ":\n" + "\n".join(found)

    @staticmethod
    def doc(value: Any) -> Any:
        """An event or registration (or a list of them) reduced to its documented keys, timestamps as instants.

        For before/after comparisons: responses may carry extra fields, and one instant may be
        written in more than one way.
        """
        if isinstance(value, list):
            return [Api.doc(v) for v in value]
        if not isinstance(value, dict):
            return value
        keys = EVENT_KEYS if "seats_left" in value or "capacity" in value else REGISTRATION_KEYS
        return {k: (instant(value.get(k)) or value.get(k)) if k in ("starts_at", "created_at") else value.get(k) for k in keys}

    # ---------------------------------------------------------------- events and registrations

    def create_event(self, **fields: Any) -> requests.Response:
        """POST /api/events with a valid body (unique title) overridden by ``fields``; the raw response."""
        body = {"title": unique("Meetup"), "starts_at": "2031-03-01T18:00:00Z", "capacity": 10, **fields}
        return self.http.post("/api/events", json=body)

    def event(self, capacity: int = 10, starts_at: str = "2031-03-01T18:00:00Z", title: str | None = None) -> dict[str, Any]:
        """A new event (must succeed)."""
        body = {"title": title or unique("Meetup"), "starts_at": starts_at, "capacity": capacity}
        return dict(self.ok(self.http.post("/api/events", json=body), 201, "create an event"))

    def post_registration(self, event: dict[str, Any] | int, **body: Any) -> requests.Response:
        """POST /api/events/{id}/registrations with exactly ``body``; the raw response."""
        event_id = event if isinstance(event, int) else event["id"]
        return self.http.post(f"/api/events/{event_id}/registrations", json=body)

    def register(self, event: dict[str, Any], name: str | None = None, email: str | None = None) -> dict[str, Any]:
        """A new registration (must succeed)."""
        body = {"name": name or unique("Ada"), "email": email or fresh_email()}
        return dict(self.ok(self.post_registration(event, **body), 201, f"register {body['email']}"))

    def fill(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """Register until every seat of ``event`` is taken."""
        return [self.register(event) for _ in range(self.seats(event))]

    def get_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """GET /api/events/{id} (must succeed)."""
        return dict(self.ok(self.http.get(f"/api/events/{event['id']}"), 200, "read the event"))

    def seats(self, event: dict[str, Any]) -> int:
        """The event's seats_left as GET /api/events/{id} answers it."""
        return int(self.get_event(event)["seats_left"])

    def events(self) -> list[dict[str, Any]]:
        """GET /api/events items (must succeed)."""
        return list(self.ok(self.http.get("/api/events"), 200, "list events")["items"])

    def listed(self, *events: dict[str, Any]) -> list[dict[str, Any]]:
        """These events as GET /api/events lists them, in its order."""
        ids = {e["id"] for e in events}
        return [e for e in self.events() if e["id"] in ids]

    def attendees(self, event: dict[str, Any]) -> list[dict[str, Any]]:
        """GET /api/events/{id}/registrations items (must succeed)."""
        return list(self.ok(self.http.get(f"/api/events/{event['id']}/registrations"), 200, "list the registrations")["items"])

    def cancel(self, registration: dict[str, Any]) -> None:
        """DELETE /api/registrations/{id} (must answer 204)."""
        self.ok(self.http.delete(f"/api/registrations/{registration['id']}"), 204, "cancel a registration")

    def unknown_event_id(self) -> int:
        """An event id no event has: far above every id listed now (a fixed number might be assigned)."""
        return max([int(e["id"]) for e in self.events()] + [0]) + 100_000

    def unknown_registration_id(self) -> int:
        """A registration id no registration has: cancel a fresh one, so its id is known to be free."""
        event = self.event(capacity=1)
        registration = self.register(event)
        self.cancel(registration)
        return int(registration["id"])


@pytest.fixture
def api(http: requests.Session) -> Api:
    """Setup helpers bound to the service under test."""
    return Api(http)


# ---------------------------------------------------------------- checks shared by the items


def documented(value: Any, expected: dict[str, Any]) -> Any:
    """``value`` restricted to the keys of ``expected``: responses may carry extra fields."""
    if not isinstance(value, dict):
        return value
    return {key: documented(value.get(key), sub) if isinstance(sub, dict) else value.get(key) for key, sub in expected.items()}


def concurrently(call: Callable[[Any], Any], args: list[Any], timeout_s: float = 30.0) -> list[Any]:
    """``call(arg)`` for every ``arg`` at once (threads released together); the results in order.

    An exception in one call (a request timeout, a refused connection) is raised here, in the
    item, instead of dying silently inside a thread: the item then ends as the timeout or crash
    it is, never as a confusing count of statuses.
    """
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Barrier(len(args), timeout=timeout_s)

    def released(arg: Any) -> Any:
        gate.wait()
        return call(arg)

    with ThreadPoolExecutor(max_workers=len(args)) as pool:
        futures = [pool.submit(released, arg) for arg in args]
        return [future.result(timeout=2 * timeout_s) for future in futures]


def parallel_posts(base_url: str, path: str, bodies: list[dict[str, Any]], timeout_s: float) -> list[requests.Response]:
    """POST every body to ``path`` at once, each on its own connection with ``timeout_s``.

    A request that gets no answer in time fails the item with a message naming it (the spec
    promises that requests may arrive concurrently), instead of hanging or vanishing in a thread.
    """

    def post(body: dict[str, Any]) -> requests.Response | str:
        try:
            with requests.Session() as session:
                session.trust_env = False
                return session.post(base_url + path, json=body, timeout=timeout_s)
        except requests.RequestException as err:
            return f"POST {path} {body} got no answer within {timeout_s:.0f} s ({type(err).__name__}: {err})"

    results = concurrently(post, bodies, timeout_s)
    lost = [r for r in results if isinstance(r, str)]
    if lost:
        pytest.fail(f"{len(lost)} of {len(bodies)} concurrent requests were lost:\n" + "\n".join(lost[:5]), pytrace=False)
    return [r for r in results if not isinstance(r, str)]


def deep_json(depth: int, leaf: str = '"x"') -> str:
    """A JSON array nested ``depth`` levels deep, built as text (no recursion needed)."""
    return "[" * depth + leaf + "]" * depth


def hostile_body_problems(service: Any, timeout_s: float, path: str, body: dict[str, Any], field: str) -> list[str]:
    """POST ``body`` to ``path`` oversized (in ``field``) and deeply nested; what went wrong.

    The spec: over 1 MiB gets 413 or 422, deeper than 32 levels gets 422, and the service keeps
    answering. Sent with a plain session: a 413 is not in the contract, and these requests are
    about limits, not about the contract.
    """
    problems: list[str] = []
    url = service.base_url + path
    sent = {"Content-Type": "application/json"}
    big = json.dumps({**body, field: "x" * (1_048_576 + 64)})
    nested_ignored = json.dumps(body)[:-1] + ', "nested_extra": ' + deep_json(40) + "}"
    nested_deep = json.dumps(body)[:-1] + ', "nested_extra": ' + deep_json(20_000) + "}"
    for label, data, allowed in (
        ("a body over 1 MiB", big, (413, 422)),
        ("a body nested 40 levels deep (in a field the contract does not define)", nested_ignored, (422,)),
        ("a body nested 20000 levels deep", nested_deep, (413, 422)),
    ):
        try:
            r = requests.post(url, data=data.encode(), headers=sent, timeout=timeout_s)
        except requests.RequestException as err:
            problems.append(f"POST {path} with {label}: no answer ({type(err).__name__}: {err})")
            continue
        if r.status_code not in allowed:
            problems.append(f"POST {path} with {label}: expected {' or '.join(map(str, allowed))}, got {r.status_code} {r.text[:150]}")
        try:
            health = requests.get(service.base_url + "/health", timeout=timeout_s)
            if health.status_code != 200:
                problems.append(f"after {label}: GET /health answered {health.status_code}")
        except requests.RequestException as err:
            problems.append(f"after {label}: the service no longer answers GET /health ({type(err).__name__})")
    return problems


TRAVERSAL_IDS = ("..%2f..%2fhealth", "%2e%2e%2f%2e%2e%2fhealth", "..%5c..%5chealth", "%2A", "1%27%20OR%20%271%27%3D%271", "1%3B%20DROP%20TABLE%20events",
                 "99999999999999999999999", "-1")


def traversal_problems(service: Any, timeout_s: float, method: str, prefix: str, suffix: str = "", body: Any = None) -> list[str]:
    """``method prefix + <hostile id> + suffix`` for ids that name nothing or try to climb out of the path; each must be 404.

    Sent as raw, already-encoded paths (requests would otherwise normalise the dot segments),
    with a plain session: the contract does not know these paths.
    """
    problems = []
    for hostile in TRAVERSAL_IDS:
        url = f"{service.base_url}{prefix}{hostile}{suffix}"
        request = requests.Request(method, url, json=body).prepare()
        request.url = url
        try:
            with requests.Session() as session:
                session.trust_env = False
                r = session.send(request, timeout=timeout_s, allow_redirects=False)
        except requests.RequestException as err:
            problems.append(f"{method} {prefix}{hostile}{suffix}: no answer ({type(err).__name__})")
            continue
        if r.status_code != 404:
            problems.append(f"{method} {prefix}{hostile}{suffix}: expected 404 (an id naming nothing), got {r.status_code} {r.text[:120]}")
    return problems


INJECTION_TEXTS = ("Robert'); DROP TABLE events;--", "' OR '1'='1", '{"$gt": ""}', "%_%", "*", "$where: 1 == 1", "<script>alert(1)</script>", "\\x00 ;--")


def answer_problems(response: requests.Response, status: int, what: str) -> list[str]:
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


def restart(service: Any, http: requests.Session) -> None:
    """Restart the service (the database stays) and drop the session's pooled connections to the old process."""
    service.restart()
    http.close()


@pytest.fixture
def checks() -> Any:
    """The shared checks for items that want them."""
    import types

    return types.SimpleNamespace(
        documented=documented, concurrently=concurrently, parallel_posts=parallel_posts, deep_json=deep_json,
        hostile_body_problems=hostile_body_problems, traversal_problems=traversal_problems, injection_texts=INJECTION_TEXTS,
        answer_problems=answer_problems, restart=restart,
    )
