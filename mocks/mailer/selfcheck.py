"""Run by hand (``python mocks/mailer/selfcheck.py``): start the mock, exercise its API, stop it.

Standard library only, like the mock. Exits non-zero with the first surprise.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any


def call(base: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def expect(label: str, got: Any, want: Any) -> None:
    if got != want:
        sys.exit(f"selfcheck FAILED: {label}: expected {want!r}, got {got!r}")
    print(f"ok  {label}")


def main() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("app.py"))], env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(50):
            try:
                call(base, "GET", "/__mock__/health")
                break
            except OSError:
                time.sleep(0.1)

        def send(to: str, **extra: Any) -> tuple[int, Any]:
            return call(base, "POST", "/messages", {"to": to, "subject": "Hold ready: Dune", "text": "Dune (B0001) waits for you.", **extra})

        status, message = send("ann@example.com")
        expect("accepted", (status, message["id"], message["status"], message["to"]), (202, "mail_000001", "queued", "ann@example.com"))
        status, error = send("not-an-address")
        expect("malformed address", (status, error["error"]["param"]), (400, "to"))
        status, error = send("ann@example.com", subject="Hi\r\nBcc: eve@example.com")
        expect("a line break in the subject is refused", (status, error["error"]["param"]), (400, "subject"))
        status, error = send("ann@example.com\r\nBcc: eve@example.com")
        expect("a line break in the address is refused", (status, error["error"]["param"]), (400, "to"))
        status, error = send("ann@example.com", text="  ")
        expect("blank text", (status, error["error"]["param"]), (400, "text"))
        expect("fail.example is always unavailable", [send("bo@fail.example")[0] for _ in range(3)], [503] * 3)
        expect("reject.example is refused for good", send("cy@reject.example")[0], 550)
        expect("a second accepted message", send("dee@example.org")[1]["id"], "mail_000002")
        status, listing = call(base, "GET", "/messages")
        expect("only accepted messages are listed", [m["id"] for m in listing["data"]], ["mail_000001", "mail_000002"])
        expect("message by id", call(base, "GET", "/messages/mail_000002")[1]["to"], "dee@example.org")
        expect("unknown message", call(base, "GET", "/messages/mail_999999")[0], 404)
        status, log = call(base, "GET", "/__mock__/requests")
        expect("requests recorded with their answer", [r["status"] for r in log["requests"]][:5], [202, 400, 400, 400, 400])
        expect("inspection messages", len(call(base, "GET", "/__mock__/messages")[1]["messages"]), 2)
        call(base, "POST", "/__mock__/reset")
        expect("reset restarts the ids", send("ann@example.com")[1]["id"], "mail_000001")
        status, log = call(base, "GET", "/__mock__/requests")
        expect("reset forgets requests", len(log["requests"]), 1)
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    print("selfcheck passed")


if __name__ == "__main__":
    main()
