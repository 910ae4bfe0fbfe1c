"""Whether a browser's pages still run their event loop: one DevTools ``Runtime.evaluate`` each, sent directly.

A WebDriver call that waits long may be a legitimate wait (a slow page load, an implicit wait,
an async script) or a page whose script never yields. chromedriver cannot tell: it is busy with
that very call. Chromium's DevTools endpoint takes more than one client, so the harness asks each
page target itself: a page whose main thread answers ``1`` is waiting, not hung; one that gives
no answer within the probe's timeout has blocked its main thread that long — Chromium's own
"Page unresponsive" dialog appears after about 15 s of that.
"""

from __future__ import annotations

import json
import urllib.request
from typing import Any

PROBE_TIMEOUT_S = 10.0
"""How long a page's main thread may take to answer before it counts as blocked (a loaded machine included)."""


def debugger_address(capabilities: dict[str, Any]) -> str | None:
    """``host:port`` of the browser's DevTools endpoint, from the session's capabilities."""
    options = capabilities.get("goog:chromeOptions") or {}
    address = options.get("debuggerAddress") if isinstance(options, dict) else None
    return address if isinstance(address, str) and address else None


def pages_answer(address: str, timeout_s: float = PROBE_TIMEOUT_S) -> bool | None:
    """False when a page target did not evaluate ``1`` within timeout_s; True when all did.

    None when the probe itself could not run (no DevTools endpoint, no page target, a refused
    connection): that is no evidence of a hung page.
    """
    import websocket

    try:
        with urllib.request.urlopen(f"http://{address}/json/list", timeout=timeout_s) as answer:
            targets = json.loads(answer.read())
    except (OSError, ValueError):
        return None
    pages = [t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page" and t.get("webSocketDebuggerUrl")]
    if not pages:
        return None
    for url in pages:
        try:
            connection = websocket.create_connection(url, timeout=timeout_s, suppress_origin=True)
        except (OSError, websocket.WebSocketException):
            return None
        try:
            connection.send(json.dumps({"id": 1, "method": "Runtime.evaluate", "params": {"expression": "1", "returnByValue": True}}))
            while True:
                message = json.loads(connection.recv())
                if message.get("id") == 1:
                    break
        except websocket.WebSocketTimeoutException:
            return False
        except (OSError, ValueError, websocket.WebSocketException):
            return None
        finally:
            connection.close()
    return True
