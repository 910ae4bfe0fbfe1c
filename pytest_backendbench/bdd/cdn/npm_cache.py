"""npm packages on disk for the offline CDN (bdd/cdn/server.py), fetched from the registry on first use.

The files are the published bytes, so Subresource Integrity hashes of pages that pin npm's
build match; for a page that pins a CDN's own build, :meth:`NpmCache.locate` looks through the
package for the file whose bytes match the page's hash (:func:`sri_matches`).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import urllib3
from urllib3.util import Retry

from .urls import PackageFile

NPM_REGISTRY = "https://registry.npmjs.org"
REGISTRY_TIMEOUT_S = 60.0
REGISTRY_ATTEMPTS = 3
USER_AGENT = "pytest-backendbench offline-cdn"
EXACT_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")
SRI_ALGORITHMS = ("sha256", "sha384", "sha512")
MAX_SRI_CANDIDATES = 2000
"""Files hashed at most when looking for a page's SRI match in one package."""


def _registry_client() -> urllib3.PoolManager:
    """A pool for the registry that retries (3 attempts, backoff) and honours HTTPS_PROXY."""
    retries = Retry(total=REGISTRY_ATTEMPTS - 1, backoff_factor=0.5, status_forcelist=(429, 500, 502, 503, 504),
                    allowed_methods=frozenset({"GET"}), raise_on_status=False)
    timeout = urllib3.Timeout(total=REGISTRY_TIMEOUT_S)
    proxy = urllib.request.getproxies().get("https")
    if proxy:
        return urllib3.ProxyManager(proxy, retries=retries, timeout=timeout)
    return urllib3.PoolManager(retries=retries, timeout=timeout)


def sri_matches(data: bytes, integrity: str) -> bool:
    """Whether data satisfies an SRI ``integrity`` value (any of its space-separated hashes)."""
    for token in integrity.split():
        algorithm, _, expected = token.partition("-")
        expected = expected.split("?", 1)[0]
        if algorithm in SRI_ALGORITHMS and base64.b64encode(hashlib.new(algorithm, data).digest()).decode() == expected:
            return True
    return False


def _matching_file(folder: Path, paths: tuple[str, ...], integrity: str) -> Path | None:
    names = {Path(p).name for p in paths} | {Path(p).name.replace(".min.", ".") for p in paths}
    suffixes = {Path(p).suffix for p in paths}
    files = [p for p in folder.rglob("*") if p.is_file() and "node_modules" not in p.parts and p.suffix in suffixes]
    files.sort(key=lambda p: (p.name not in names, len(p.parts), str(p)))  # likely ones first
    for candidate in files[:MAX_SRI_CANDIDATES]:
        if sri_matches(candidate.read_bytes(), integrity):
            return candidate
    return None


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
        self._http = _registry_client()

    def file(self, request: PackageFile) -> Path:
        """The file a request names, fetching its package first; PackageUnavailable if none."""
        return self.locate(request)[0]

    def locate(self, request: PackageFile, integrity: str | None = None) -> tuple[Path, str]:
        """The file a request names and the exact package version it comes from.

        With ``integrity`` (the page's SRI attribute for this URL), the file whose bytes match
        it wins: the named file, its unminified twin, any file of that name, then any file of
        that type in the package (a CDN may keep a build in another folder than npm's).
        Without a match, the named file is served (the browser will refuse it, as it says).
        """
        version = self.resolve(request.package, request.version)
        folder = self.unpacked(request.package, version)
        paths = request.paths or (self._entry_point(folder),)
        found = _first_file(folder, paths)
        if found is None and len(paths) > 1:
            # cdnjs minifies files that npm ships unminified (html-to-image.min.js): the
            # unminified file works, though not under an SRI hash of cdnjs' own minified copy
            found = _first_file(folder, tuple(p.replace(".min.", ".") for p in paths)) or _unique_basename(folder, paths[0])
        if integrity and (found is None or not sri_matches(found.read_bytes(), integrity)):
            found = _matching_file(folder, paths, integrity) or found
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
        """GET from the registry; urllib3 retries a dropped connection, 429 or 5xx (with backoff)."""
        try:
            response = self._http.request("GET", url, headers={"User-Agent": USER_AGENT, **(headers or {})})
        except urllib3.exceptions.HTTPError as err:
            raise PackageUnavailable(f"{url}: the npm registry cannot be reached ({err})") from err
        if response.status != 200:
            raise PackageUnavailable(f"{url}: the registry answered {response.status}")
        return bytes(response.data)

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
