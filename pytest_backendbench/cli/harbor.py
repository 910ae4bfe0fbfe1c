"""``backendbench export harbor``: tasks of this harness written as Harbor tasks (formats/harbor_export.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import HarnessError
from ..formats.harbor_export import export_harbor_task


def add_export_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``export harbor``."""
    export = sub.add_parser("export", help="write tasks in another framework's format")
    export.add_argument("target", choices=("harbor",), help="harbor: Harbor tasks (task.toml, instruction.md, environment/, solution/, tests/)")
    export.add_argument("tasks", nargs="+", help="task ids")
    export.add_argument("--bench-root", default=".", help="folder holding benchmarks/ and oracles/ (default: .)")
    export.add_argument("--out", required=True, help="folder to write one Harbor task folder per task into")
    export.add_argument("--base-image", default="python:3.12-slim", help="the environment's FROM: a Debian image with python3 and venv (default python:3.12-slim)")
    export.add_argument("--solution", default=None, help="a candidate folder as solution/ instead of the reference (one task only)")


def run_export(args: argparse.Namespace) -> int:
    """Export each task; print where it went."""
    if args.solution is not None and len(args.tasks) != 1:
        raise HarnessError("--solution applies to one task; name one task")
    for task_id in args.tasks:
        folder = export_harbor_task(
            Path(args.bench_root).resolve(), task_id, Path(args.out), base_image=args.base_image,
            solution=Path(args.solution).resolve() if args.solution else None,
        )
        print(f"exported {task_id} as a Harbor task: {folder}")
    return 0
