"""``backendbench doctor``: the machine's diagnosis (diagnosis.py) on one screen, its verdict as the exit code."""

from __future__ import annotations

from ..diagnosis import diagnose


def main() -> int:
    """``backendbench doctor``: print the screen, return the exit code."""
    diagnosis = diagnose()
    print(diagnosis.render())
    return diagnosis.exit_code
