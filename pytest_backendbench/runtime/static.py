"""Static frontend candidates: plain files (an HTML page, js, css, assets) with no server of their own.

The harness serves the folder over HTTP from a throwaway server in its own process, so browser
scenarios open the candidate the way a user would, whatever the main runtime is. The entry page
need not be ``index.html`` at the top: :func:`find_entry_page` picks it the way E2EDev's runner
does (the first HTML file of the tree), with a deterministic order, and the service's base URL
points at the entry page's folder.
"""

from __future__ import annotations

import functools
import os
import threading
import time
import urllib.parse
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..candidates import Candidate
from ..errors import BuildFailure
from ..tasks import Task
from .base import CandidateImage, MockSpec

HTML_SUFFIXES = (".html", ".htm")
SKIPPED_FOLDERS = frozenset({"node_modules", "features", "__pycache__", "__MACOSX"})
"""Folders never searched for the entry page (dependencies, E2EDev's test folders), with hidden ones."""


def find_entry_page(root: Path) -> Path | None:
    """The candidate's entry page: the shallowest HTML file, ``index.html`` first, then by name.

    E2EDev's runner opens the first ``.html`` file ``os.walk`` yields, whose order depends on
    the file system; this is the same rule made deterministic: fewest folders deep wins, at
    one depth ``index.html`` beats other names, and ties go to the path sorted as text
    (``app/index.html`` before ``web/index.html``). Hidden folders, ``node_modules`` and
    ``features`` are not searched. None when the tree holds no HTML file at all.
    """
    found: list[tuple[int, bool, str, Path]] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS)
        depth = len(Path(folder).relative_to(root).parts)
        for name in files:
            if name.lower().endswith(HTML_SUFFIXES):
                path = Path(folder) / name
                found.append((depth, name.lower() != "index.html", path.relative_to(root).as_posix(), path))
    return min(found)[3] if found else None


def is_static_site(candidate: Candidate, task: Task) -> bool:
    """A frontend candidate without a Dockerfile or a run command is served as files."""
    return task.kind == "frontend" and not candidate.has_dockerfile and not candidate.run


class _QuietHandler(SimpleHTTPRequestHandler):
    """Serves files; logs into the service log instead of stderr.

    A request for the entry page's folder answers the entry page, also when it is not called
    index.html.
    """

    log_lines: list[str]
    entry_folder_url: str
    entry_file: str

    def translate_path(self, path: str) -> str:
        if urllib.parse.unquote(path.split("?", 1)[0].split("#", 1)[0]) == self.entry_folder_url:
            return self.entry_file
        return super().translate_path(path)

    def log_message(self, format: str, *args: Any) -> None:
        self.log_lines.append(format % args)


class StaticSiteService:
    """A candidate's folder served on 127.0.0.1 (the ``RunningService`` protocol).

    The whole folder is served, so ``../`` references of an entry page in a subfolder work as
    they do from disk; ``base_url`` is the entry page's folder and answers the entry page.
    """

    def __init__(self, root: Path, entry: Path | None = None) -> None:
        self.log_lines: list[str] = []
        root = root.resolve()
        self.entry_file = (entry or root / "index.html").resolve()
        self.app_dir = self.entry_file.parent
        relative = self.app_dir.relative_to(root).as_posix()
        folder_url = "/" if relative == "." else f"/{relative}/"
        handler = type(
            "Handler", (_QuietHandler,), {"log_lines": self.log_lines, "entry_folder_url": folder_url, "entry_file": str(self.entry_file)}
        )
        started = time.monotonic()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="backendbench-static", daemon=True)
        self._thread.start()
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}" + urllib.parse.quote(folder_url.rstrip("/"))
        self.mock_urls: dict[str, str] = {}
        self.mock_urls_for_candidate: dict[str, str] = {}
        self.database_url: str | None = None
        self.ready_seconds = time.monotonic() - started
        self._stopped = False

    def logs(self, tail: int | None = None) -> str:
        lines = self.log_lines[-tail:] if tail else self.log_lines
        return "\n".join(lines)

    def alive(self) -> bool:
        return not self._stopped

    def exit_reason(self) -> str | None:
        return "stopped" if self._stopped else None

    def restart(self) -> None:
        """Files have no process state: nothing to restart."""

    def stop(self) -> None:
        if not self._stopped:
            self._stopped = True
            self._server.shutdown()
            self._server.server_close()


class StaticSiteRuntime:
    """Serves static frontend candidates; nothing to build, nothing left behind."""

    name = "static"
    trusted_only = False

    def __init__(self) -> None:
        self._services: list[StaticSiteService] = []

    def build(self, candidate: Candidate, task: Task) -> CandidateImage:
        if find_entry_page(candidate.path) is None:
            raise BuildFailure(
                "a static frontend candidate needs an HTML page",
                f"no .html file in {candidate.path} or its subfolders (hidden folders, node_modules and features/ are not searched)",
            )
        return CandidateImage(candidate, str(candidate.path), candidate.content_hash(), cached=True, build_seconds=0.0)

    def start(self, image: CandidateImage, task: Task, mocks: list[MockSpec]) -> StaticSiteService:
        root = Path(image.ref)
        service = StaticSiteService(root, find_entry_page(root))
        self._services.append(service)
        return service

    def close(self) -> None:
        for service in self._services:
            service.stop()
        self._services.clear()
