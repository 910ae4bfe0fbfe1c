"""Oracle support for rules about requests that arrive at once (issue #35).

Many specs say "requests may arrive concurrently" and then state a rule with one winner: a name
is unique, a copy is lent once, a limit is never passed, a side effect happens exactly once. A
service that checks and then acts without a lock or a transaction keeps those rules one request
at a time and breaks them when two arrive together, so an item must send them together:
``at_once`` releases up to ``MAX_AT_ONCE`` requests from one barrier, each on its own
connection through the item's own session (the contract check and the hang guard still see
every answer), and returns every answer in order. The item then checks the invariant from
outside with ``one_winner`` (exactly the allowed number succeed, every other gets the stated
refusal) and by reading the state back or asking a mock what it received.

The burst goes only to a service on this machine or a private network (loopback, a container
bridge): a benchmark never floods a public host.

Like http/api.py this module declares itself oracle support (``__oracle_support__``): a request
that gets no answer in time, or answers outside the rule, fails the item as the candidate's
failure; a barrier that cannot be reached is the harness's error.
"""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import threading
import urllib.parse
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
import requests

from .api import brief

__oracle_support__ = True
"""Read by outcomes.exception_origin: assertions raised here are the oracle's verdict."""

MAX_AT_ONCE = 16
"""At most this many requests in one burst: enough to make a race likely, few enough for a
small service on a loaded machine (and under urllib3's connection pool of its session)."""

Arg = TypeVar("Arg")


def local_host(base_url: str) -> bool:
    """Whether ``base_url`` names this machine or a private network address (a container bridge)."""
    host = urllib.parse.urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:
        return False
    return bool(addresses) and all(ipaddress.ip_address(str(a).split("%")[0]).is_private for a in addresses)


def at_once(base_url: str, send: Callable[[Arg], requests.Response], args: Sequence[Arg], timeout_s: float) -> list[requests.Response]:
    """``send(arg)`` for every ``arg``, all released together by one barrier; the answers in order.

    ``send`` makes one request to the service at ``base_url`` (normally through the item's
    ``http`` session or its task's ``Api``). A request that gets no answer within ``timeout_s``
    (beyond the wait at the barrier) fails the item and says which one: a spec that lets requests
    arrive concurrently promises an answer to each.
    """
    __tracebackhide__ = True
    if not 2 <= len(args) <= MAX_AT_ONCE:
        raise ValueError(f"at_once sends 2 to {MAX_AT_ONCE} requests together, not {len(args)}: change the oracle item")
    if not local_host(base_url):
        raise ValueError(f"at_once only sends bursts to this machine or a private network, not to {base_url}")
    gate = threading.Barrier(len(args), timeout=timeout_s)

    def released(arg: Arg) -> requests.Response | str:
        gate.wait()
        try:
            return send(arg)
        except requests.RequestException as err:
            return f"request {arg!r} got no answer within {timeout_s:.0f} s ({type(err).__name__}: {err})"

    with ThreadPoolExecutor(max_workers=len(args), thread_name_prefix="at-once") as pool:
        futures = [pool.submit(released, arg) for arg in args]
        # the barrier and the request each may take timeout_s: wait for both before calling it lost
        results = [future.result(timeout=2 * timeout_s + 5) for future in futures]
    lost = [r for r in results if isinstance(r, str)]
    if lost:
        pytest.fail(f"{len(lost)} of {len(args)} concurrent requests were lost:\n" + "\n".join(lost[:5]), pytrace=False)
    return [r for r in results if not isinstance(r, str)]


def parallel_posts(base_url: str, path: str, bodies: list[dict[str, Any]], timeout_s: float) -> list[requests.Response]:
    """POST every body to ``path`` at once, each on its own connection with ``timeout_s``."""
    __tracebackhide__ = True

    def post(body: dict[str, Any]) -> requests.Response:
        with requests.Session() as session:
            session.trust_env = False
            return session.post(base_url + path, json=body, timeout=timeout_s)

    return at_once(base_url, post, bodies, timeout_s)


def _refused_with(response: requests.Response, code: str) -> bool:
    """Whether ``response`` carries a JSON object whose ``error`` is ``code``."""
    with contextlib.suppress(ValueError):
        body = response.json()
        return isinstance(body, dict) and body.get("error") == code
    return False


def one_winner(answers: Sequence[requests.Response], what: str, *, won: int = 201, allowed: int = 1,
               refused: int = 409, code: str | None = None) -> list[requests.Response]:
    """Assert the rule of a race: exactly ``allowed`` answers are ``won``, every other one is the
    stated refusal (``refused`` with error ``code`` when given); returns the winners.

    ``what`` names the rule for the failure message, which lists every answer's status.
    """
    __tracebackhide__ = True
    winners = [a for a in answers if a.status_code == won]
    losers = [a for a in answers if a.status_code != won]
    statuses = ", ".join(str(a.status_code) for a in answers)
    assert len(winners) == allowed, (
        f"{what}: {len(answers)} requests sent at once, expected exactly {allowed} to get {won}, "
        f"{len(winners)} did (statuses: {statuses})")
    wrong = [a for a in losers if a.status_code != refused or (code is not None and not _refused_with(a, code))]
    expected = f"{refused}" + (f" {code}" if code else "")
    assert not wrong, f"{what}: every other request should get {expected}, got:\n" + "\n".join(brief(a) for a in wrong[:5])
    return winners
