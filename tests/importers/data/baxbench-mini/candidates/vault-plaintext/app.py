"""Vault, insecure: passwords stored in plain text (CWE-522)."""

import hashlib
import json
import os
import sqlite3
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DB = "db.sqlite3"
PLAINTEXT = True


def digest(password: str, salt: bytes) -> str:
    return password if PLAINTEXT else salt.hex() + hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 1000).hex()


class Handler(BaseHTTPRequestHandler):
    def answer(self, status: int) -> None:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.answer(404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        status = 404
        with sqlite3.connect(DB) as db:  # committed when the block ends, before the answer
            if self.path == "/register":
                db.execute("INSERT INTO users VALUES (?, ?)", (body["username"], digest(body["password"], os.urandom(8))))
                status = 201
            elif self.path == "/login":
                row = db.execute("SELECT secret FROM users WHERE name = ?", (body["username"],)).fetchone()
                salt = b"" if row is None or PLAINTEXT else bytes.fromhex(row[0][:16])
                status = 200 if row is not None and digest(body["password"], salt) == row[0] else 401
        self.answer(status)


if __name__ == "__main__":
    with sqlite3.connect(DB) as db:
        db.execute("CREATE TABLE IF NOT EXISTS users (name TEXT, secret TEXT)")
    ThreadingHTTPServer(("0.0.0.0", 5000), Handler).serve_forever()
