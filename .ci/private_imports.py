"""Fail when a module of the package imports another module's private name (``from .x import _y``).

A leading underscore says "only this module uses it": a second user means the name is part of
an interface and should be public (or the code should move). ruff's PLC2701 skips first-party
imports, so the gate runs this instead. Usage: python .ci/private_imports.py [PACKAGE_DIR]
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def private_imports(package: Path) -> list[str]:
    """Every ``from ... import _name`` in the package, as ``path:line: module._name``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        found.append(f"{path}:{node.lineno}: {'.' * node.level}{node.module or ''}.{alias.name}")
    return found


if __name__ == "__main__":
    problems = private_imports(Path(sys.argv[1] if len(sys.argv) > 1 else "pytest_backendbench"))
    for line in problems:
        print(line)
    if problems:
        print(f"{len(problems)} private name(s) imported across modules: make them public or keep them in their module")
    sys.exit(1 if problems else 0)
