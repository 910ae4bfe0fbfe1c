"""The offline CDN shim: well-known CDN hosts answered from npm packages on this machine.

Generated web apps (and E2EDev's reference apps) load jQuery, Bootstrap, Font Awesome, Chart.js
and friends from public CDNs; a machine without internet then fails their scenarios for a
reason that says nothing about the app. With ``--bench-cdn=offline`` (the default) the harness's
Chromium resolves the CDN hosts of :data:`CDN_HOSTS` to a small local server
(``--host-resolver-rules``) that speaks TLS with a certificate made at start, trusted by
Chromium through ``--ignore-certificate-errors-spki-list`` (plain HTTP is answered on the same
port). It maps each URL to a file of an npm package (:func:`map_cdn_url`), fetched once from
the npm registry into a cache folder, so the bytes are the published ones and SRI
``integrity`` attributes still match. ``latest`` and partial versions are resolved once and
pinned in the cache's ``pins.json``; every package@version served, with the version the URL
asked for, is recorded (:class:`ServedPackage`) for the report's manifest. Google Fonts CSS is answered with ``local()`` fallbacks;
anything else gets a fast 404.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import fcntl
import hashlib
import io
import json
import mimetypes
import os
import re
import shutil
import socket
import ssl
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

# imported with the module, not inside a function: pytester's in-process runs drop modules first
# imported during a run, and cryptography's Rust extension does not survive a re-import
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ..errors import HarnessError

CDN_MODES = ("offline", "live", "off")
CDN_HOSTS = (
    "cdn.jsdelivr.net",
    "fastly.jsdelivr.net",
    "cdnjs.cloudflare.com",
    "unpkg.com",
    "code.jquery.com",
    "stackpath.bootstrapcdn.com",
    "maxcdn.bootstrapcdn.com",
    "netdna.bootstrapcdn.com",
    "fonts.googleapis.com",
    "fonts.gstatic.com",
)
NPM_REGISTRY = "https://registry.npmjs.org"
REGISTRY_TIMEOUT_S = 60.0
REGISTRY_ATTEMPTS = 3
# cdnjs library names that are not the npm package's name; a callable picks by major version
CDNJS_PACKAGES: dict[str, Any] = {
    "twitter-bootstrap": "bootstrap",
    "font-awesome": lambda major: "font-awesome" if major < 5 else "@fortawesome/fontawesome-free",
    "popper.js": lambda major: "popper.js" if major < 2 else "@popperjs/core",
    "chart.js": "chart.js",
    "lodash.js": "lodash",
    "moment.js": "moment",
    "toastr.js": "toastr",
    "three.js": "three",
    "normalize": "normalize.css",
    "jquery.qrcode": "jquery.qrcode",
    "bootstrap-icons": "bootstrap-icons",
}
# where cdnjs (and code.jquery.com, bootstrapcdn) keep a file that npm has in a build folder
BUILD_FOLDERS = ("", "dist/", "dist/umd/", "umd/", "build/", "lib/")
GOOGLE_FONT_FALLBACKS = ("local('DejaVu Sans')", "local('Liberation Sans')", "local('Noto Sans')")
EXTRA_TYPES = {".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf", ".otf": "font/otf", ".eot": "application/vnd.ms-fontobject",
               ".mjs": "text/javascript", ".js": "text/javascript", ".map": "application/json", ".svg": "image/svg+xml", ".css": "text/css"}
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")


# --- which package file a CDN URL means ------------------------------------------------------


@dataclass(frozen=True)
class PackageFile:
    """A file of an npm package as a CDN URL names it.

    ``version`` is what the URL says (``3.6.0``, ``5``, ``latest`` or empty); ``paths`` are the
    places to try inside the package, in order (empty: the package's browser entry point).
    """

    package: str
    version: str
    paths: tuple[str, ...]


@dataclass(frozen=True)
class FontsCss:
    """A Google Fonts stylesheet request: answered with local() fallbacks for its families."""

    families: tuple[str, ...]


def _split_package(spec: str) -> tuple[str, str, str] | None:
    """``@scope/name@ver/path`` or ``name@ver/path`` -> (name, version, path)."""
    match = re.match(r"^((?:@[^/@]+/)?[^/@]+)(?:@([^/]*))?(?:/(.*))?$", spec)
    if match is None:
        return None
    return match.group(1), match.group(2) or "", match.group(3) or ""


def _major(version: str) -> int:
    match = re.match(r"^[\^~=v]*(\d+)", version)
    return int(match.group(1)) if match else 999


def _in_build_folders(path: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(folder + path for folder in BUILD_FOLDERS))


def map_cdn_url(host: str, path: str) -> PackageFile | FontsCss | None:
    """The npm file (or font stylesheet) a CDN URL stands for, None when there is none.

    Shapes: jsdelivr ``/npm/<pkg>@<ver>/<path>``; unpkg ``/<pkg>@<ver>/<path>``; cdnjs
    ``/ajax/libs/<lib>/<ver>/<file>``; code.jquery.com ``/jquery-<ver>(.slim)(.min).js``,
    ``/jquery-migrate-<ver>.min.js`` and ``/ui/<ver>/...``; bootstrapcdn
    ``/bootstrap/<ver>/...`` and ``/font-awesome/<ver>/...``; Google Fonts ``/css``, ``/css2``.
    """
    host = host.split(":")[0].lower()
    split = urllib.parse.urlsplit(path)
    clean = urllib.parse.unquote(split.path)
    if host in ("cdn.jsdelivr.net", "fastly.jsdelivr.net"):
        if not clean.startswith("/npm/"):
            return None
        parts = _split_package(clean[len("/npm/"):])
        return PackageFile(parts[0], parts[1], (parts[2],) if parts[2] else ()) if parts else None
    if host == "unpkg.com":
        parts = _split_package(clean.lstrip("/"))
        return PackageFile(parts[0], parts[1], (parts[2],) if parts[2] else ()) if parts else None
    if host == "cdnjs.cloudflare.com":
        match = re.match(r"^/ajax/libs/([^/]+)/([^/]+)/(.+)$", clean)
        if match is None:
            return None
        library, version, file = match.groups()
        package = CDNJS_PACKAGES.get(library, CDNJS_PACKAGES.get(library.lower(), library.lower()))
        if callable(package):
            package = package(_major(version))
        return PackageFile(str(package), version, _in_build_folders(file))
    if host == "code.jquery.com":
        match = re.match(r"^/jquery-(\d+\.\d+\.\d+)((?:\.slim)?(?:\.min)?\.(?:js|map))$", clean)
        if match:
            return PackageFile("jquery", match.group(1), (f"dist/jquery{match.group(2)}",))
        match = re.match(r"^/jquery-migrate-(\d+\.\d+\.\d+)((?:\.min)?\.js)$", clean)
        if match:
            return PackageFile("jquery-migrate", match.group(1), (f"dist/jquery-migrate{match.group(2)}",))
        match = re.match(r"^/ui/(\d+\.\d+\.\d+)/(.+)$", clean)
        if match:
            return PackageFile("jquery-ui", match.group(1), _in_build_folders(match.group(2)))
        return None
    if host.endswith("bootstrapcdn.com"):
        match = re.match(r"^/(bootstrap|font-awesome)/(\d+\.\d+\.\d+)/(.+)$", clean)
        if match is None:
            return None
        package, version, file = match.groups()
        return PackageFile(package, version, _in_build_folders(file))
    if host == "fonts.googleapis.com" and clean in ("/css", "/css2", "/icon"):
        query = urllib.parse.parse_qs(split.query)
        families: list[str] = []
        for value in query.get("family", []):
            for family in value.split("|"):
                name = family.split(":")[0].strip()
                if name:
                    families.append(name)
        return FontsCss(tuple(dict.fromkeys(families)))
    return None


def fonts_fallback_css(request: FontsCss) -> str:
    """@font-face rules that give each requested family the machine's own sans-serif fonts."""
    rules = []
    for family in request.families:
        for weight in (300, 400, 500, 700):
            rules.append(
                f"@font-face {{ font-family: '{family}'; font-style: normal; font-weight: {weight}; "
                f"src: local('{family}'), {', '.join(GOOGLE_FONT_FALLBACKS)}; }}"
            )
    return "/* backendbench offline CDN: local fallbacks for Google Fonts */\n" + "\n".join(rules) + "\n"


# --- the npm cache ---------------------------------------------------------------------------


class PackageUnavailable(Exception):
    """The package or version is not on the registry (or the registry cannot be reached)."""


class NpmCache:
    """npm package files on disk, fetched from the registry on first use.

    ``<root>/<package>/<version>/`` holds the unpacked tarball; ``<root>/pins.json`` records
    the version that ``latest`` and partial versions (``5``, ``3.6``) resolved to, so that later
    runs serve the same bytes. Safe to share between processes (a lock file per package).
    """

    def __init__(self, root: Path, registry: str = NPM_REGISTRY) -> None:
        self.root = Path(root)
        self.registry = registry.rstrip("/")
        self._missing: set[str] = set()
        self._lock = threading.Lock()

    def file(self, request: PackageFile) -> Path:
        """The file a request names, fetching its package first; PackageUnavailable if none."""
        return self.locate(request)[0]

    def locate(self, request: PackageFile) -> tuple[Path, str]:
        """The file a request names and the exact package version it comes from."""
        version = self.resolve(request.package, request.version)
        folder = self.unpacked(request.package, version)
        paths = request.paths or (self._entry_point(folder),)
        found = _first_file(folder, paths)
        if found is None and len(paths) > 1:
            # cdnjs minifies files that npm ships unminified (html-to-image.min.js): the
            # unminified file works, though not under an SRI hash of cdnjs' own minified copy
            found = _first_file(folder, tuple(p.replace(".min.", ".") for p in paths)) or _unique_basename(folder, paths[0])
        if found is not None:
            return found, version
        raise PackageUnavailable(f"{request.package}@{version} has no file {' or '.join(paths)}")

    @property
    def pins(self) -> dict[str, str]:
        """``package@spec`` -> the version it was pinned to."""
        try:
            return dict(json.loads((self.root / "pins.json").read_text()))
        except (OSError, ValueError):
            return {}

    def resolve(self, package: str, spec: str) -> str:
        """The exact version a URL's version means; ``latest``/partial ones are pinned once."""
        spec = spec.strip().lstrip("v=") if spec.strip() not in ("", "latest") else "latest"
        if EXACT_VERSION.match(spec):
            return spec
        key = f"{package}@{spec}"
        pinned = self.pins.get(key)
        if pinned:
            return pinned
        document = self._fetch_json(f"{self.registry}/{_quote(package)}", abbreviated=True)
        tags = document.get("dist-tags") or {}
        versions = [v for v in (document.get("versions") or {}) if EXACT_VERSION.match(v) and "-" not in v]
        if spec in tags:
            version = str(tags[spec])
        else:
            prefix = spec.lstrip("^~")
            matching = [v for v in versions if v == prefix or v.startswith(prefix + ".")]
            if not matching:
                raise PackageUnavailable(f"{package}: no version matches {spec!r}")
            version = max(matching, key=_version_key)
        with self._pins_lock():
            pins = self.pins
            version = pins.setdefault(key, version)
            _write_atomically(self.root / "pins.json", json.dumps(pins, indent=1, sort_keys=True).encode())
        return version

    def unpacked(self, package: str, version: str) -> Path:
        """``<root>/<package>/<version>``, downloading and unpacking the tarball if needed."""
        folder = self.root / package / version
        if (folder / "package.json").is_file():
            return folder
        key = f"{package}@{version}"
        if key in self._missing:
            raise PackageUnavailable(f"{key} is not on the registry")
        with self._lock, self._package_lock(package):
            if (folder / "package.json").is_file():
                return folder
            try:
                document = self._fetch_json(f"{self.registry}/{_quote(package)}/{version}")
                tarball = self._fetch(str(document["dist"]["tarball"]))
            except PackageUnavailable:
                self._missing.add(key)
                raise
            except (KeyError, TypeError) as err:
                raise PackageUnavailable(f"{key}: the registry's answer has no dist.tarball") from err
            staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=self.root))
            try:
                _unpack(tarball, staging)
                folder.parent.mkdir(parents=True, exist_ok=True)
                shutil.rmtree(folder, ignore_errors=True)
                os.replace(staging, folder)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        return folder

    def _entry_point(self, folder: Path) -> str:
        try:
            manifest = json.loads((folder / "package.json").read_text())
        except (OSError, ValueError):
            manifest = {}
        for field in ("jsdelivr", "unpkg", "browser", "main"):
            value = manifest.get(field)
            if isinstance(value, str) and value:
                value = value.removeprefix("./")
                return value if (folder / value).is_file() or value.endswith(".js") else value + ".js"
        return "index.js"

    def _fetch(self, url: str, headers: dict[str, str] | None = None) -> bytes:
        """GET from the registry; a dropped connection, 429 or 5xx is tried again (3 attempts)."""
        request = urllib.request.Request(url, headers={"User-Agent": "pytest-backendbench offline-cdn", **(headers or {})})
        for attempt in range(1, REGISTRY_ATTEMPTS + 1):
            try:
                with urllib.request.urlopen(request, timeout=REGISTRY_TIMEOUT_S) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as err:
                if err.code != 429 and err.code < 500 or attempt == REGISTRY_ATTEMPTS:
                    raise PackageUnavailable(f"{url}: the registry answered {err.code}") from err
            except (urllib.error.URLError, OSError) as err:
                if attempt == REGISTRY_ATTEMPTS:
                    raise PackageUnavailable(f"{url}: the npm registry cannot be reached ({err})") from err
            time.sleep(0.5 * attempt)
        raise PackageUnavailable(f"{url}: the npm registry cannot be reached")

    def _fetch_json(self, url: str, abbreviated: bool = False) -> dict[str, Any]:
        headers = {"Accept": "application/vnd.npm.install-v1+json"} if abbreviated else {}
        try:
            document = json.loads(self._fetch(url, headers))
        except ValueError as err:
            raise PackageUnavailable(f"{url}: not JSON") from err
        if not isinstance(document, dict):
            raise PackageUnavailable(f"{url}: unexpected answer")
        return document

    @contextlib.contextmanager
    def _package_lock(self, package: str) -> Iterator[None]:
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".{package.replace('/', '__')}.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    @contextlib.contextmanager
    def _pins_lock(self) -> Iterator[None]:
        with self._package_lock("pins.json"):
            yield


def _first_file(folder: Path, paths: tuple[str, ...]) -> Path | None:
    root = folder.resolve()
    for relative in paths:
        candidate = (folder / relative).resolve()
        if candidate.is_file() and candidate.is_relative_to(root):
            return candidate
    return None


def _unique_basename(folder: Path, path: str) -> Path | None:
    """The package's only file named like path's last part (or its unminified twin), if exactly one."""
    names = {Path(path).name, Path(path).name.replace(".min.", ".")}
    for name in names:
        found = [p for p in folder.rglob(name) if p.is_file() and "node_modules" not in p.parts]
        if len(found) == 1:
            return found[0]
    return None


def _quote(package: str) -> str:
    return package.replace("/", "%2F")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version.split("-")[0])[:3])


def _unpack(tarball: bytes, target: Path) -> None:
    """Unpack an npm tarball without its top folder (``package/`` for most packages)."""
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            if not (member.isfile() or member.isdir()):
                continue
            parts = Path(member.name).parts[1:]
            if not parts or ".." in parts or Path(member.name).is_absolute():
                continue
            destination = target.joinpath(*parts)
            if member.isdir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            source = archive.extractfile(member)
            if source is not None:
                destination.write_bytes(source.read())


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


# --- the server ------------------------------------------------------------------------------


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
        try:
            path, version = self.server.cache.locate(mapped)
        except PackageUnavailable as err:
            self.server.log_lines.append(f"{host}{self.path}: {err}")
            self._send(404, f"the offline CDN cannot serve {host}{self.path}: {err}\n".encode(), "text/plain", send_body)
            return
        self.server.record(ServedPackage(mapped.package, mapped.version, version, f"{'https' if isinstance(self.connection, ssl.SSLSocket) else 'http'}://{host}{self.path}"))
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
        self._folder = Path(tempfile.mkdtemp(prefix="backendbench-cdn-"))
        self.spki_pin, self._tls = _make_tls_context(self._folder, CDN_HOSTS)
        super().__init__(("127.0.0.1", 0), _CdnHandler)
        self.port = int(self.server_address[1])
        self._thread = threading.Thread(target=self.serve_forever, name="backendbench-cdn", daemon=True)
        self._thread.start()

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
        """Stop serving and remove the certificate."""
        self.shutdown()
        self.server_close()
        shutil.rmtree(self._folder, ignore_errors=True)


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


def _make_tls_context(folder: Path, hosts: tuple[str, ...]) -> tuple[str, ssl.SSLContext]:
    """A self-signed certificate for hosts; returns its SPKI pin (base64 SHA-256) and a server context."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pytest-backendbench offline CDN")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
        .sign(key, hashes.SHA256())
    )
    spki = certificate.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    (folder / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (folder / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return base64.b64encode(hashlib.sha256(spki).digest()).decode(), context


def default_cdn_cache() -> Path:
    """``<backendbench cache>/cdn`` (BACKENDBENCH_CACHE or ~/.cache/pytest-backendbench)."""
    from ..runtime.base import default_cache_dir

    return default_cache_dir() / "cdn"
