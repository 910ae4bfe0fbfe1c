"""The agent's starting workspace: the task's visible material as files, nothing from oracles/.

An agent reads files rather than one prompt, so the visible contract is laid out as a folder:
the task's own files (spec.md, openapi.yaml, other assets under ``benchmarks/<task>/``), the
requirements as REQUIREMENTS.md, and the candidate-format rules as CANDIDATE_FORMAT.md (the
same rules the single-answer generator sends). Whatever the agent leaves there becomes the
candidate.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..candidates import FORMAT_RULES
from ..errors import TaskFormatError
from ..tasks import VisibleTask

REQUIREMENTS_FILE = "REQUIREMENTS.md"
CANDIDATE_FORMAT_FILE = "CANDIDATE_FORMAT.md"
SCRATCH_DIR = ".backendbench"
"""Harness files inside the workspace (the task prompt of ``cmd:`` agents); never copied out."""

CANDIDATE_FORMAT_INTRO = """\
# How your work is evaluated

This folder becomes your candidate when you finish: the harness builds it from its
`Dockerfile`, starts it, and tests it from outside over HTTP against spec.md, openapi.yaml and
REQUIREMENTS.md. Files you leave here are part of the candidate; keep the folder small (no
virtual environments or caches).

"""


def prepare_workspace(task: VisibleTask, dest: Path) -> None:
    """Write the visible material of ``task`` into ``dest`` (created if missing).

    Raises ``TaskFormatError`` when a visible file resolves outside the task's folder (a symlink
    into oracles/ must never reach an agent).
    """
    root = task.spec_path.parent
    resolved_root = root.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    files = [task.spec_path, *([task.openapi_path] if task.openapi_path else []), *task.assets]
    for source in dict.fromkeys(files):
        if not source.resolve().is_relative_to(resolved_root):
            raise TaskFormatError(
                source,
                f"resolves to {source.resolve()}, outside {resolved_root}; an agent may see only the task's visible "
                "contract, so benchmarks/<task>/ must not link elsewhere (least of all into oracles/)",
            )
        relative = source.relative_to(root) if source.is_relative_to(root) else Path(source.name)
        target = dest / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    (dest / REQUIREMENTS_FILE).write_text(requirements_markdown(task), encoding="utf-8")
    (dest / CANDIDATE_FORMAT_FILE).write_text(CANDIDATE_FORMAT_INTRO + FORMAT_RULES, encoding="utf-8")


def requirements_markdown(task: VisibleTask) -> str:
    """REQUIREMENTS.md: every requirement id with its text, as the oracle's items refer to them."""
    lines = [f"# Requirements of {task.id}: {task.title}", ""]
    if not task.requirements:
        lines.append("(This task lists no separate requirements; spec.md and openapi.yaml are the contract.)")
    lines += [f"- **{rid}**: {text}" for rid, text in task.requirements.items()]
    return "\n".join(lines) + "\n"
