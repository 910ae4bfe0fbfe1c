"""Worked examples of pytest-backendbench's hooks (copy what you need into your own conftest.py).

This file is loaded by every pytest run in this repository, so it only defines hooks: nothing
happens at import and each example acts only when asked (its model name or its environment
variable). tests/test_root_conftest.py runs them.

1. An agentic generator of your own: ``--bench-generate --bench-model=example:hello-agent``.
2. A custom sandbox image for it: ``EXAMPLE_AGENT_IMAGE=my/image:tag`` (the built-in
   ``agent:``/``cmd:`` generators take ``--agent-image`` instead).
3. A result observer: ``BACKENDBENCH_RESULT_LOG=results.jsonl`` appends one line per task.
4. A step guard for ``agent:`` runs: stops a run whose agent tries to wipe the filesystem.
"""

from __future__ import annotations

import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

# --- 1 + 2: an agentic generator --------------------------------------------------------------

HELLO_SERVICE = r'''
import json, os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        found = self.path == "/health"
        body = json.dumps({"status": "ok"} if found else {"detail": "not found"}).encode()
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

ThreadingHTTPServer(("0.0.0.0", int(os.environ.get("PORT", "8000"))), Handler).serve_forever()
'''
HELLO_DOCKERFILE = 'ARG BASE_IMAGE=python:3.12-slim\nFROM ${BASE_IMAGE}\nWORKDIR /app\nCOPY app.py .\nCMD ["python", "app.py"]\n'


def pytest_backendbench_generate(task: Any, workspace: Path, model: str) -> dict[str, Any] | None:
    """An "agent" that works in a sandbox the way an LLM agent would: it reads the visible task
    and writes files with shell commands. Replace ``plan`` with calls to your model."""
    if model != "example:hello-agent":
        return None  # not ours: the next generator (agent:, cmd:, openai:, reference) answers
    from pytest_backendbench.agents.sandbox import SandboxSpec, open_sandbox
    from pytest_backendbench.runtime import resolve_runtime_name

    engine = "docker" if resolve_runtime_name("auto")[0] == "docker" else "process"
    # image=None is the default agent image; any image with bash works (example 2)
    spec = SandboxSpec(task=task, key=task.id, session_id=f"example-{secrets.token_hex(4)}", image=os.environ.get("EXAMPLE_AGENT_IMAGE"))
    plan = [
        "head -5 spec.md",  # what an agent looks at first: only the visible task is there
        f"cat > app.py <<'EOF'\n{HELLO_SERVICE}\nEOF",
        f"cat > Dockerfile <<'EOF'\n{HELLO_DOCKERFILE}EOF",
        "echo 'run: python app.py' > candidate.yaml",
    ]
    with open_sandbox(spec, engine) as sandbox:  # closed (container removed) even on error
        results = [sandbox.run(command) for command in plan]
        sandbox.copy_out(workspace)  # the workspace becomes the candidate
    return {"model": model, "steps": len(plan), "exit_reason": "submitted", "commands_failed": sum(r.exit_code != 0 for r in results)}


# --- 3: a result observer -----------------------------------------------------------------------


def pytest_backendbench_task_result(task: str, result: Any) -> None:
    """Append each finished task's headline to $BACKENDBENCH_RESULT_LOG (a tracker, an RL reward log)."""
    log = os.environ.get("BACKENDBENCH_RESULT_LOG")
    if not log:
        return
    passed = sum(1 for item in result.items if item.outcome == "passed")
    line = {"task": task, "candidate": result.candidate, "passed": passed, "items": len(result.items), "model": result.generation.get("model")}
    with open(log, "a", encoding="utf-8") as file:
        file.write(json.dumps(line) + "\n")


# --- 4: a step guard ------------------------------------------------------------------------------

WIPE = re.compile(r"\brm\s+-\w*r\w*\s+(?:--no-preserve-root\s+)?/(?:\*|\s|$)")


def pytest_backendbench_agent_step(task: Any, sample: str, step: Any) -> bool | None:
    """Stop an ``agent:`` run whose model tries to delete the filesystem (return True = stop)."""
    return any(action.command and WIPE.search(action.command) for action in step.actions) or None
