"""The offline CDN shim: well-known CDN hosts answered from npm packages on this machine.

Generated web apps (and E2EDev's reference apps) load jQuery, Bootstrap, Font Awesome, Chart.js
and friends from public CDNs; a machine without internet then fails their scenarios for a
reason that says nothing about the app. With ``--bench-cdn=offline`` (the default) the harness's
Chromium resolves the CDN hosts of :data:`CDN_HOSTS` to a small local server
(``--host-resolver-rules``) that speaks TLS with a certificate made at start by trustme, trusted
by Chromium through ``--ignore-certificate-errors-spki-list`` (plain HTTP is answered on the
same port). It maps each URL to a file of an npm package (:func:`~.urls.map_cdn_url`),
fetched once from the npm registry into a cache folder (:class:`~.npm_cache.NpmCache`), so the
bytes are the published ones and SRI ``integrity`` attributes still match; for a page that pins a
CDN's own build the server knows the page's hash (:meth:`CdnServer.learn_integrity`) and serves
the package file that has it, when one does. ``latest`` and partial versions are resolved once
and pinned in the cache's ``pins.json``; every package@version served, with the version the URL
asked for, is recorded (:class:`ServedPackage`) for the report's manifest. Google Fonts CSS is
answered with ``local()`` fallbacks; anything else gets a fast 404.
"""

from __future__ import annotations

import base64
import hashlib
import mimetypes
import re
import socket
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# imported with the module, not inside a function: pytester's in-process runs drop modules first
# imported during a run, and cryptography's Rust extension does not survive a re-import
import trustme
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from ...errors import HarnessError
from .npm_cache import NpmCache, PackageUnavailable
from .urls import CDN_HOSTS, FontsCss, PackageFile, fonts_fallback_css, map_cdn_url

CDN_MODES = ("offline", "live", "off")
MAX_SCANNED_PAGES = 200
TAG = re.compile(r"<(?:script|link)\b[^>]*>", re.IGNORECASE | re.DOTALL)
URL_ATTRIBUTE = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
INTEGRITY_ATTRIBUTE = re.compile(r"""\bintegrity\s*=\s*["']([^"']+)["']""", re.IGNORECASE)
EXTRA_TYPES = {".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject",
               ".mjs": "text/javascript", ".js": "text/javascript", ".map": "application/json", ".svg": "image/svg+xml", ".css": "text/css"}


@dataclass(frozen=True)
class ServedPackage:
    """A package version the offline CDN served, what the URL asked for, and the first such URL.

    ``requested`` is the URL's version (``3.6.0``, ``5``, ``latest``, or empty when the URL
    names none); when it is not exact, ``version`` is the pin it resolved to. The report's
    manifest lists these, so a run says which bytes stood in for "latest".
    """

    package: str
    requested: str
    version: str
    url: str

    @property
    def pinned(self) -> bool:
        """Whether the version was chosen here (the URL named none, a tag or a partial one)."""
        return self.requested != self.version

    def to_dict(self) -> dict[str, Any]:
        """The manifest entry."""
        return {"package": self.package, "requested": self.requested, "version": self.version, "pinned": self.pinned, "url": self.url}


class _CdnHandler(BaseHTTPRequestHandler):
    server: CdnServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        self.server.log_lines.append(format % args)

    def do_OPTIONS(self) -> None:
        self.send_response(204)
        self._common_headers()
        self.send_header("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
        self.send_header("Access-Control-Allow-Headers", "*")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self._answer(send_body=True)

    def do_HEAD(self) -> None:
        self._answer(send_body=False)

    def _answer(self, send_body: bool) -> None:
        host = self.headers.get("Host", "")
        mapped = map_cdn_url(host, self.path)
        if isinstance(mapped, FontsCss):
            self._send(200, fonts_fallback_css(mapped).encode(), "text/css; charset=utf-8", send_body)
            return
        if mapped is None:
            self._send(404, f"the offline CDN does not serve {host}{self.path}\n".encode(), "text/plain", send_body)
            return
        scheme = "https" if isinstance(self.connection, ssl.SSLSocket) else "http"
        url = f"{scheme}://{host}{self.path}"
        try:
            path, version = self.server.cache.locate(mapped, self.server.integrity_for(url))
        except PackageUnavailable as err:
            self.server.log_lines.append(f"{host}{self.path}: {err}")
            self._send(404, f"the offline CDN cannot serve {host}{self.path}: {err}\n".encode(), "text/plain", send_body)
            return
        self.server.record(ServedPackage(mapped.package, mapped.version, version, url))
        content_type = EXTRA_TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        if content_type.startswith(("text/", "application/json")):
            content_type += "; charset=utf-8"
        self._send(200, path.read_bytes(), content_type, send_body)

    def _common_headers(self) -> None:
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cross-Origin-Resource-Policy", "cross-origin")
        self.send_header("Timing-Allow-Origin", "*")

    def _send(self, status: int, body: bytes, content_type: str, send_body: bool) -> None:
        self.send_response(status)
        self._common_headers()
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "public, max-age=31536000" if status == 200 else "no-store")
        self.end_headers()
        if send_body:
            self.wfile.write(body)


class CdnServer(ThreadingHTTPServer):
    """The local stand-in for the CDN hosts: TLS and plain HTTP on one port on 127.0.0.1.

    A connection whose first byte opens a TLS handshake is wrapped with the server's
    self-signed certificate (made at start, for the CDN host names); others are plain HTTP.
    """

    daemon_threads = True

    def __init__(self, cache: NpmCache) -> None:
        self.cache = cache
        self.log_lines: list[str] = []
        self._served: dict[tuple[str, str, str], ServedPackage] = {}
        self._unreported: list[ServedPackage] = []
        self._served_lock = threading.Lock()
        self._integrity: dict[str, str] = {}
        self._scanned: set[str] = set()
        self.spki_pin, self._tls = _make_tls_context(CDN_HOSTS)
        super().__init__(("127.0.0.1", 0), _CdnHandler)
        self.port = int(self.server_address[1])
        self._thread = threading.Thread(target=self.serve_forever, name="backendbench-cdn", daemon=True)
        self._thread.start()

    def learn_integrity(self, site: Path) -> None:
        """Read the SRI ``integrity`` attributes of a static site's pages (once per folder).

        A request carries no integrity value; knowing the page's lets the cache pick the
        package file whose bytes match (:meth:`NpmCache.locate`).
        """
        key = str(site)
        if key in self._scanned:
            return
        self._scanned.add(key)
        for page in sorted(site.rglob("*.htm*"))[:MAX_SCANNED_PAGES]:
            try:
                text = page.read_text(errors="replace")
            except OSError:
                continue
            for tag in TAG.findall(text):
                url, integrity = URL_ATTRIBUTE.search(tag), INTEGRITY_ATTRIBUTE.search(tag)
                if url and integrity:
                    self._integrity.setdefault(url.group(1).strip(), integrity.group(1).strip())

    def integrity_for(self, url: str) -> str | None:
        """The SRI value a known page gives this URL (with or without the scheme), if any."""
        return self._integrity.get(url) or self._integrity.get("//" + url.split("://", 1)[-1])

    def finish_request(self, request: Any, client_address: Any) -> None:
        """Speak TLS when the client does (handshake in the request's own thread)."""
        try:
            request.settimeout(30)
            first = request.recv(1, socket.MSG_PEEK)
            if first == b"\x16":
                request = self._tls.wrap_socket(request, server_side=True)
        except (OSError, ssl.SSLError):
            return
        super().finish_request(request, client_address)

    def record(self, served: ServedPackage) -> None:
        """Remember a package version served (once per package, requested and served version)."""
        key = (served.package, served.requested, served.version)
        with self._served_lock:
            if key not in self._served:
                self._served[key] = served
                self._unreported.append(served)

    @property
    def served(self) -> list[ServedPackage]:
        """Every package version served so far, in the order first served."""
        with self._served_lock:
            return list(self._served.values())

    def take_unreported(self) -> list[ServedPackage]:
        """The package versions served since the last call (each is handed out once)."""
        with self._served_lock:
            taken, self._unreported = self._unreported, []
        return taken

    def chromium_flags(self) -> list[str]:
        """The flags that send Chromium's requests for CDN hosts here and trust our certificate."""
        rules = ", ".join(f"MAP {host} 127.0.0.1:{self.port}" for host in CDN_HOSTS)
        return [f"--host-resolver-rules={rules}", f"--ignore-certificate-errors-spki-list={self.spki_pin}"]

    def close(self) -> None:
        """Stop serving."""
        self.shutdown()
        self.server_close()


def cdn_flags(mode: str, server: CdnServer | None) -> list[str]:
    """Chromium flags for a --bench-cdn mode: ``offline`` -> our server, ``off`` -> CDN hosts fail fast."""
    if mode not in CDN_MODES:
        raise HarnessError(f"--bench-cdn={mode!r}: expected one of {', '.join(CDN_MODES)}")
    if mode == "offline":
        if server is None:
            raise HarnessError("--bench-cdn=offline needs the offline CDN server")
        return server.chromium_flags()
    if mode == "off":
        return ["--host-resolver-rules=" + ", ".join(f"MAP {host} ~NOTFOUND" for host in CDN_HOSTS)]
    return []


def _make_tls_context(hosts: tuple[str, ...]) -> tuple[str, ssl.SSLContext]:
    """A certificate for hosts (trustme's throwaway CA); returns its SPKI pin (base64 SHA-256) and a server context."""
    authority = trustme.CA()
    issued = authority.issue_cert(*hosts)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    issued.configure_cert(context)
    leaf = x509.load_pem_x509_certificate(issued.cert_chain_pems[0].bytes())
    spki = leaf.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(spki).digest()).decode(), context


def default_cdn_cache() -> Path:
    """``<backendbench cache>/cdn`` (BACKENDBENCH_CACHE or ~/.cache/pytest-backendbench)."""
    from ...runtime.base import default_cache_dir

    return default_cache_dir() / "cdn"


__all__ = [
    "CDN_HOSTS",
    "CDN_MODES",
    "CdnServer",
    "FontsCss",
    "NpmCache",
    "PackageFile",
    "PackageUnavailable",
    "ServedPackage",
    "cdn_flags",
    "default_cdn_cache",
    "fonts_fallback_css",
    "map_cdn_url",
]
