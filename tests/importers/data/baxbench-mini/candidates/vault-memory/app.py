"""Vault without a database file: the storage check cannot complete (inconclusive)."""

import hashlib
import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USERS: dict[str, str] = {}


class Handler(BaseHTTPRequestHandler):
    def answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.answer(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        secret = hashlib.sha256(body["password"].encode()).hexdigest()
        if self.path == "/register":
            USERS[body["username"]] = secret
            return self.answer(201)
        if self.path == "/login":
            return self.answer(200 if USERS.get(body["username"]) == secret else 401)
        self.answer(404)


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", 5000), Handler).serve_forever()
