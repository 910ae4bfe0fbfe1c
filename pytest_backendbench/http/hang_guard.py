"""A candidate that stopped answering costs one timeout per item, not one per request.

A service that holds every connection open (a deadlocked worker, a handler in an endless loop)
makes each request of each item wait ``--bench-request-timeout``: an oracle of a few hundred
requests then waits an hour for a verdict that was known after the first few. The guard counts
request timeouts in a row per run; once ``STRIKES`` requests in a row have timed out, the service
is taken as hung and a later request is answered at once with :class:`ServiceHung` (a read
timeout, hence the candidate's failure) — unless a quick probe of the service gets an answer,
which clears the strikes: a service that recovers is judged normally again.
"""

from __future__ import annotations

import threading

import pytest
import requests

STRIKES = 3
"""Request timeouts in a row after which the service is taken as hung."""
PROBE_TIMEOUT_S = 1.0


class ServiceHung(requests.exceptions.ReadTimeout):
    """A request not sent: the service timed out on the last requests in a row and still does not answer."""


class HangGuard:
    """The timeouts in a row of one run's service (shared by the ``http`` sessions of its items)."""

    def __init__(self, base_url: str, timeout_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.strikes = 0
        self._lock = threading.Lock()

    def check(self, method: str, url: str) -> None:
        """Before a request: raise ServiceHung when the service is hung and a probe confirms it."""
        with self._lock:
            strikes = self.strikes
        if strikes < STRIKES or not self._still_hung():
            return
        raise ServiceHung(
            f"{method} {url} was not sent: the service's last {strikes} requests in a row got no answer within "
            f"{self.timeout_s:g} s (--bench-request-timeout) and it still does not answer; the candidate stopped answering",
            request=requests.Request(method, url).prepare(),  # names the service: the candidate's failure (outcomes.py)
        )

    def answered(self) -> None:
        """A response arrived: the service answers."""
        with self._lock:
            self.strikes = 0

    def timed_out(self) -> None:
        """A request got no answer within the timeout."""
        with self._lock:
            self.strikes += 1

    def _still_hung(self) -> bool:
        try:
            with requests.Session() as session:
                session.trust_env = False  # harness-to-candidate traffic never goes through a proxy
                session.get(self.base_url + "/", timeout=PROBE_TIMEOUT_S, allow_redirects=False)
        except requests.exceptions.Timeout:
            return True
        except requests.exceptions.RequestException:
            return False  # refused or reset: not a hang; the request itself will say what happens
        self.answered()
        return False


GUARDS_KEY = pytest.StashKey[dict[str, HangGuard]]()


def guard_for(config: pytest.Config, base_url: str, timeout_s: float) -> HangGuard:
    """The run's guard (one per service base URL in this process)."""
    guards = config.stash.setdefault(GUARDS_KEY, {})
    guard = guards.get(base_url)
    if guard is None:
        guard = guards[base_url] = HangGuard(base_url, timeout_s)
    return guard
