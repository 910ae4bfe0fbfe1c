"""Checks shared by the bundled oracles' items: each returns what it found, the item asserts.

They live in the package so that nine oracles do not carry nine copies. None of them asserts
or raises on a candidate's answer (a check choking on an answer inside the package would be
counted as the harness's error): they return a list of problems, and the oracle item's own
``assert not problems`` makes the verdict the candidate's. ``concurrently`` re-raises what a
call raised, from the oracle's own code, so a request timeout stays the candidate's.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import types
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import requests


def _error_code(response: requests.Response) -> Any:
    """The ``error`` member of a JSON error answer, or None when the body is not such an object."""
    try:
        body = response.json()
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) else None


def password_leaks(text: str, password: str) -> list[str]:
    """Forms of ``password`` found in ``text``: its value, unsalted digests of it, or a salted hash.

    The spec forbids revealing the password, not the word "password": a key of that name is
    fine, its value or a hash of it is not.
    """
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
    gate = threading.Barrier(len(args), timeout=timeout_s)

    def released(arg: Any) -> Any:
        gate.wait()
        return call(arg)

    with ThreadPoolExecutor(max_workers=len(args)) as pool:
        futures = [pool.submit(released, arg) for arg in args]
        # the barrier and the call each have timeout_s: wait for both before calling it lost
        return [future.result(timeout=2 * timeout_s) for future in futures]


def deep_json(depth: int, leaf: str = '"x"') -> str:
    """A JSON array nested ``depth`` levels deep, built as text (no recursion needed)."""
    return "[" * depth + leaf + "]" * depth


def hostile_body_problems(service: Any, timeout_s: float, method: str, path: str, headers: dict[str, str], body: dict[str, Any], field: str) -> list[str]:
    """Send ``body`` to ``path`` oversized (in ``field``) and deeply nested; what went wrong.

    The spec: over 1 MiB gets 413 or 422, deeper than 32 levels gets 422, and the service keeps
    answering. Sent with a plain session: a 413 is not in every contract, and these requests are
    about limits, not about the contract.
    """
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


def traversal_problems(
    service: Any, timeout_s: float, prefix: str, headers: dict[str, str], suffix: str = "",
    *, method: str = "GET", body: Any = None, extra_ids: tuple[str, ...] = (),
) -> list[str]:
    """``method prefix + <hostile id> + suffix`` for ids that try to climb out of the path; each must be 404.

    Sent as raw, already-encoded paths (requests would otherwise normalise the dot segments),
    with a plain session: the contract does not know these paths. ``extra_ids`` adds a task's own.
    """
    problems = []
    for hostile in (*TRAVERSAL_IDS, *extra_ids):
        url = f"{service.base_url}{prefix}{hostile}{suffix}"
        request = requests.Request(method, url, headers=headers, json=body).prepare()
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


def wrong_method_problems(service: Any, timeout_s: float, path: str, headers: dict[str, str], methods: tuple[str, ...] = ("PUT", "DELETE", "PATCH")) -> list[str]:
    """Each of ``methods`` on ``path`` (which does not have them) must get 405 ``method_not_allowed``.

    Sent around the contract session: these operations are not in openapi.yaml, on purpose.
    """
    problems = []
    for method in methods:
        try:
            r = requests.request(method, service.base_url + path, headers=headers, timeout=timeout_s)
        except requests.RequestException as err:
            problems.append(f"{method} {path}: no answer ({type(err).__name__})")
            continue
        if r.status_code != 405 or _error_code(r) != "method_not_allowed":
            problems.append(f"{method} {path}: expected 405 with error 'method_not_allowed', got {r.status_code} {r.text[:150]}")
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
        elif (r.headers.get("Content-Type") or "").split(";")[0].strip() == "application/json" and _error_code(r) != "unauthorized":
            problems.append(f"{method} {path} with Authorization {shown!r}: expected error 'unauthorized', got {r.text[:120]}")
    return problems


INJECTION_TEXTS = ("Robert'); DROP TABLE users;--", "' OR '1'='1", '{"$gt": ""}', "%_%", "*", "$where: 1 == 1", "<script>alert(1)</script>", "\\x00 ;--")


def injection_texts(table: str) -> tuple[str, ...]:
    """``INJECTION_TEXTS`` with the SQL one dropping ``table`` (a task's own main table)."""
    return (f"Robert'); DROP TABLE {table};--", *INJECTION_TEXTS[1:])


def table_ids(table: str, *extra: str) -> tuple[str, ...]:
    """Path ids of a task's own beside the shared traversal ids: SQL dropping ``table`` in an id, an
    integer beyond every type, a negative one, and ``extra``."""
    return (f"1%3B%20DROP%20TABLE%20{table}", "99999999999999999999999", "-1", *extra)


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


def oracle_checks() -> types.SimpleNamespace:
    """The checks as one object, for an oracle's ``checks`` fixture."""
    return types.SimpleNamespace(
        password_leaks=password_leaks, documented=documented, concurrently=concurrently, deep_json=deep_json,
        hostile_body_problems=hostile_body_problems, traversal_problems=traversal_problems, token_problems=token_problems,
        wrong_method_problems=wrong_method_problems,
        injection_texts=INJECTION_TEXTS, answer_problems=answer_problems,
    )
