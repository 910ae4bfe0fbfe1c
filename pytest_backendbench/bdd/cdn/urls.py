"""Which npm package file a CDN URL stands for (the offline CDN's map, see bdd/cdn/server.py).

Pure functions of the URL: no network, no cache. docs/bdd.md has the table of shapes.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass
from typing import Any

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
    "ajax.googleapis.com",
)
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
    # cdnjs keeps Modernizr 2's full build; npm has it only in this package (3.x is a builder)
    "modernizr": lambda major: "npm-modernizr" if major < 3 else "modernizr",
    # Google Hosted Libraries' names (ajax.googleapis.com/ajax/libs/<lib>/...)
    "jqueryui": "jquery-ui",
    "angularjs": "angular",
    "webfont": "webfontloader",
    "threejs": "three",
    "d3js": "d3",
}
# where cdnjs (and code.jquery.com, bootstrapcdn) keep a file that npm has in a build folder
BUILD_FOLDERS = ("", "dist/", "dist/umd/", "umd/", "build/", "lib/")
GOOGLE_FONT_FALLBACKS = ("local('DejaVu Sans')", "local('Liberation Sans')", "local('Noto Sans')")

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

    Shapes: jsdelivr ``/npm/<pkg>@<ver>/<path>``; unpkg ``/<pkg>@<ver>/<path>``; cdnjs and Google Hosted Libraries
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
    if host in ("cdnjs.cloudflare.com", "ajax.googleapis.com"):
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
        match = re.match(r"^/(bootstrap|font-awesome)/(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?)/(.+)$", clean)
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
