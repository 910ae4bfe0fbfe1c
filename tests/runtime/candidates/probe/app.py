"""A code-only candidate (no Dockerfile: the probe task supplies the image) for the container fixture's tests.

It keeps state in memory and on disk, so an item that saw another item's state would show
that per-item isolation leaked; ``/kill`` ends its own server and ``/hog`` allocates memory
until the OOM killer stops it.
"""

import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COUNT = {"hits": 0}
HOG: list = []
STATE = "/tmp/probe-state.txt"


def hog() -> None:
    # slowly enough that an oracle can watch the memory grow before the OOM killer acts
    while True:
        chunk = bytearray(4 * 1024 * 1024)
        chunk[::4096] = b"x" * len(chunk[::4096])  # touch every page: resident, not just reserved
        HOG.append(chunk)
        time.sleep(0.25)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        if self.path == "/health":
            return self.send_json(200, {"status": "ok"})
        if self.path == "/counter":
            COUNT["hits"] += 1
            with open(STATE, "a") as state:
                state.write("hit\n")
            return self.send_json(200, {"hits": COUNT["hits"]})
        if self.path == "/kill":
            self.send_json(200, {"killing": True})
            # as PID 1 it cannot SIGKILL itself (the kernel spares init): it ends its process instead
            threading.Timer(0.2, lambda: os._exit(3)).start()
            return None
        if self.path == "/hog":
            threading.Thread(target=hog, daemon=True).start()
            return self.send_json(200, {"hogging": True})
        return self.send_json(404, {"error": "not found"})

    def send_json(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format, *args):
        print("probe: " + format % args, flush=True)


def main():
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with open("/app/started.txt", "w") as started:
        started.write(os.environ.get("APP_SECRET", "") + "\n")
    server = ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "5000"))), Handler)
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
