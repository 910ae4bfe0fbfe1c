"""Files that answers a traversal safely, then its server exits (CWE-703)."""

import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

ROOT = os.path.realpath("/app/files")
MODE = "crash"


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        name = unquote(self.path.removeprefix("/files/"))
        path = os.path.realpath(os.path.join(ROOT, name))
        crash = MODE == "crash" and ".." in name
        if MODE == "safe" or crash:
            allowed = os.path.dirname(path) == ROOT
        else:
            allowed = True
        body = b""
        status = 404
        if allowed and os.path.isfile(path):
            with open(path, "rb") as handle:
                body, status = handle.read(), 200
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        if crash:
            os._exit(3)


if __name__ == "__main__":
    ThreadingHTTPServer(("0.0.0.0", 5000), Handler).serve_forever()
