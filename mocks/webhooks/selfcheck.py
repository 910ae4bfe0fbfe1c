"""Run by hand (``python mocks/webhooks/selfcheck.py``): start the mock, exercise its API, stop it.

Standard library only, like the mock. Exits non-zero with the first surprise.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
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


def call(base: str, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    request = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def call_raw(base: str, path: str) -> tuple[int, bytes]:
    """POST {} over a bare socket: the status and every byte after the headers (to see a stray body)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}".encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest


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
        raw = '{"action": "opened", "title": "caf\u00e9"}'.encode()
        signature = "sha256=" + hmac.new(b"s3cret-key", raw, hashlib.sha256).hexdigest()
        status, answer = call(base, "POST", "/hooks/a", raw=raw, headers={"X-Tracker-Signature": signature})
        expect("a delivery is received", (status, answer), (200, {"received": True, "seq": 1}))
        expect("a bad status can be set", call(base, "POST", "/__mock__/respond", {"path": "/hooks/b", "status": 500}), (200, {"path": "/hooks/b", "status": 500}))
        expect("the set status is answered", call(base, "POST", "/hooks/b", {"x": 1})[0], 500)
        expect("other paths still get 200", call(base, "POST", "/hooks/c", {"x": 2})[0], 200)
        call(base, "POST", "/__mock__/respond", {"path": "/hooks/empty", "status": 204})
        expect("a 204 has no body", call_raw(base, "/hooks/empty"), (204, b""))
        expect("a bad respond is refused", call(base, "POST", "/__mock__/respond", {"path": "/x", "status": 42})[0], 400)
        call(base, "POST", "/__mock__/respond", {"path": "/hooks/silent", "status": 0})
        try:
            call(base, "POST", "/hooks/silent", {"x": 3})
            sys.exit("selfcheck FAILED: a silent path answered")
        except (OSError, urllib.error.URLError):
            print("ok  a silent path gets no answer")
        status, log = call(base, "GET", "/__mock__/requests")
        expect("every request recorded with its answer", [(r["path"], r["status"]) for r in log["requests"]],
               [("/hooks/a", 200), ("/hooks/b", 500), ("/hooks/c", 200), ("/hooks/empty", 204), ("/hooks/silent", None)])
        first = log["requests"][0]
        expect("exact body bytes kept", base64.b64decode(first["body_base64"]), raw)
        expect("headers kept lower-cased", first["headers"]["x-tracker-signature"], signature)
        expect("json parsed", first["json"], {"action": "opened", "title": "caf\u00e9"})
        status, log = call(base, "GET", "/__mock__/requests?path=/hooks/b")
        expect("filter by path", [r["seq"] for r in log["requests"]], [2])
        call(base, "POST", "/__mock__/reset")
        expect("reset forgets answers", call(base, "POST", "/hooks/b", {"x": 1})[0], 200)
        status, log = call(base, "GET", "/__mock__/requests")
        expect("reset forgets requests", len(log["requests"]), 1)
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    print("selfcheck passed")


if __name__ == "__main__":
    main()
