"""The clock that tells a hung page from a slow call, without a browser."""

from __future__ import annotations

import threading
import time
from typing import Any

from selenium.webdriver.remote.command import Command

from pytest_backendbench.bdd.browser.command_clock import CommandClock


def test_a_call_is_overdue_only_past_the_longest_timeout_the_session_set_plus_the_margin() -> None:
    clock = CommandClock(page_load_s=30, script_s=30, margin_s=15)
    release = threading.Event()

    def execute(command: str, params: dict[str, Any]) -> str:
        if command == Command.CLICK_ELEMENT:
            release.wait(5)
        return command

    timed = clock.wrap(execute)
    assert clock.limit_s == 45
    assert timed(Command.SET_TIMEOUTS, {"implicit": 0, "pageLoad": 2000, "script": 1000}) == Command.SET_TIMEOUTS
    assert clock.limit_s == 17  # the step code's own timeouts, not the harness's defaults
    timed(Command.SET_TIMEOUTS, {"implicit": 60000})
    assert clock.limit_s == 75  # an implicit wait of 60 s makes a 60 s find_element legitimate
    timed(Command.SET_TIMEOUTS, {"implicit": 0})
    assert clock.overdue() is None  # nothing in flight
    caller = threading.Thread(target=timed, args=(Command.CLICK_ELEMENT, {}))
    caller.start()
    time.sleep(0.2)
    now = time.monotonic()
    assert clock.overdue(now) is None and clock.overdue(now + 16) is None
    overdue = clock.overdue(now + 18)
    assert overdue is not None and overdue[0] == Command.CLICK_ELEMENT and overdue[1] > 17
    release.set()
    caller.join()
    assert clock.overdue(now + 100) is None  # answered: no longer in flight
