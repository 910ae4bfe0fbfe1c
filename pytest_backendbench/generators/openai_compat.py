"""The ``openai:<model>`` generator: any OpenAI-compatible chat-completions server.

Works with the OpenAI API, vLLM, Ollama, llama.cpp's server, LiteLLM and the like. The model
gets spec.md, openapi.yaml, the requirements and the candidate format rules, and answers with
files as fenced code blocks whose opening line names the path (```python path=app.py). An
answer without files or without a Dockerfile, or one naming a path outside the workspace, is
answered with a corrective message and retried; token usage is summed over every attempt.
A ``prompt: verbatim`` task (imported BaxBench) is asked and parsed as BaxBench does instead.

The chat client and its settings (``--openai-*``, ``BACKENDBENCH_OPENAI_*``) are llm/chat.py's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import requests

from ..candidates import FORMAT_RULES
from ..llm.chat import DEFAULT_ATTEMPTS, ChatClient, GenerationError, OpenAISettings, Usage
from ..tasks import VisibleTask
from .answer import MalformedAnswer, baxbench_targets, check_files, parse_answer

MODEL_PREFIX = "openai:"
MAX_INLINE_ASSET_BYTES = 20_000

SYSTEM_PROMPT = (
    "You are a senior backend engineer. You write complete, working services that are built "
    "with Docker and tested only from outside, over HTTP, against their specification. "
    "You answer with the service's files in the exact format the user asks for."
)

BAXBENCH_SYSTEM_PROMPT = "You are an experienced full-stack developer"
"""BaxBench's ``_SYSTEM_PROMPT`` (src/prompts.py), sent with a ``prompt: verbatim`` task's spec.md."""

ANSWER_FORMAT = """\
## Answer format

Answer with every file of the service. Each file is one fenced code block whose opening fence
line gives its language and `path=` followed by the file's path relative to the service root:

```python path=app.py
print("complete file contents")
```

```dockerfile path=Dockerfile
ARG BASE_IMAGE=python:3.12-slim
FROM ${BASE_IMAGE}
```

Paths are relative (no leading `/`, no `..`). Give each file once. If a file itself contains
```, open and close its block with four backticks (````). Text outside the code blocks is
ignored.
"""


# --- the prompt ----------------------------------------------------------------------------


def build_prompt(task: VisibleTask) -> str:
    """The user message: the visible contract, the format rules and the answer format."""
    parts = [
        f"# Task: {task.title}",
        "",
        (
            f"Write a complete {task.kind} service for the task `{task.id}`. It must implement the "
            "specification, the OpenAPI contract and every requirement below. It will be built from "
            "its Dockerfile, started, and tested only from outside over HTTP."
        ),
        "",
        "## Specification (spec.md)",
        "",
        task.spec.strip(),
        "",
    ]
    openapi = task.openapi
    if openapi is not None:
        parts += ["## OpenAPI contract (openapi.yaml)", "", "````yaml", openapi.rstrip(), "````", ""]
    if task.requirements:
        parts += ["## Requirements", ""]
        parts += [f"- **{rid}**: {text}" for rid, text in task.requirements.items()]
        parts.append("")
    extra = [p for p in task.assets if p not in (task.spec_path, task.openapi_path)]
    if extra:
        parts += ["## Other files of the task", ""]
        base = task.spec_path.parent
        for path in extra:
            rel = path.relative_to(base).as_posix() if path.is_relative_to(base) else path.name
            text = _text_of(path)
            if text is None:
                parts.append(f"- `{rel}` (binary or large; not shown)")
            else:
                parts += [f"### {rel}", "", "````", text.rstrip(), "````", ""]
        parts.append("")
    parts += [FORMAT_RULES, ANSWER_FORMAT]
    return "\n".join(parts)


def _text_of(path: Path) -> str | None:
    if path.stat().st_size > MAX_INLINE_ASSET_BYTES:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        return None


def corrective_message(problem: str, truncated: bool) -> str:
    """What the model is told after an unusable answer."""
    cut = " The answer was cut off at the token limit: be more concise (fewer comments, no explanations)." if truncated else ""
    return (
        f"Your answer cannot be used: {problem}.{cut} Answer again with the complete set of files, each "
        "as a fenced code block whose opening line names its path, e.g. ```python path=app.py — "
        "a Dockerfile and a candidate.yaml at the root are required."
    )


# --- the generator -------------------------------------------------------------------------


class OpenAICompatGenerator:
    """Answers ``--bench-model=openai:<model>`` through an OpenAI-compatible chat-completions server."""

    backendbench_models = (f"{MODEL_PREFIX}<model>",)

    def __init__(self, settings: OpenAISettings | None = None) -> None:
        self.settings = settings or OpenAISettings()

    @pytest.hookimpl(trylast=True)
    def pytest_backendbench_generate(self, task: VisibleTask, workspace: Path, model: str) -> dict[str, Any] | None:
        """Prompt, parse, retry with a correction while the answer is unusable, write the files."""
        if not model.startswith(MODEL_PREFIX):
            return None
        name = model[len(MODEL_PREFIX) :]
        if not name:
            raise GenerationError("--bench-model openai: needs the server's model name after the colon, e.g. openai:gpt-4o-mini")
        settings = self.settings.resolved()
        with requests.Session() as session:
            return generate_with_chat(ChatClient(settings, name, session), settings, task, workspace)


def generate_with_chat(client: ChatClient, settings: OpenAISettings, task: VisibleTask, workspace: Path) -> dict[str, Any]:
    """The conversation for one sample; the files of the first usable answer are written.

    A ``prompt: verbatim`` task (imported BaxBench) is asked as BaxBench asks: its system prompt,
    spec.md as is, one answer read by its parser; one it cannot read fails the sample, uncorrected.
    """
    system, prompt = (BAXBENCH_SYSTEM_PROMPT, task.spec) if task.verbatim else (SYSTEM_PROMPT, build_prompt(task))
    messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]
    attempts = 1 if task.verbatim else settings.attempts or DEFAULT_ATTEMPTS
    usage = Usage()
    served: str | None = None
    finish: str | None = None
    problem = ""

    def metadata(answers: int) -> dict[str, Any]:
        prices = settings.prices()
        cost = None
        if prices is not None and usage.prompt_tokens is not None:
            cost = round((usage.prompt_tokens * prices[0] + (usage.completion_tokens or 0) * prices[1]) / 1e6, 6)
        data: dict[str, Any] = {
            "tokens_in": usage.prompt_tokens,
            "tokens_out": usage.completion_tokens,
            "cost_usd": cost,
            "attempts": answers,
        }
        if served:
            data["model"] = f"{MODEL_PREFIX}{served}"
        if finish:
            data["finish_reason"] = finish
        return data

    for attempt in range(1, attempts + 1):
        try:
            completion = client.complete(messages, usage)
        except GenerationError as err:
            raise GenerationError(str(err), metadata(attempt - 1)) from err
        served = completion.served_model or served
        finish = completion.finish_reason
        try:
            answer = completion.content
            targets = baxbench_targets(answer, task.code_files, workspace) if task.verbatim else check_files(parse_answer(answer), workspace)
        except MalformedAnswer as err:
            problem = str(err)
            messages += [
                {"role": "assistant", "content": completion.content},
                {"role": "user", "content": corrective_message(problem, finish == "length")},
            ]
            continue
        for target, content in targets.items():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        return metadata(attempt)
    raise GenerationError(f"no usable answer from {client.model!r} in {attempts} attempt(s); the last one: {problem}", metadata(attempts))
