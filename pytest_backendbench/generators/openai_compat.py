"""The ``openai:<model>`` generator: any OpenAI-compatible chat-completions server.

Works with the OpenAI API, vLLM, Ollama, llama.cpp's server, LiteLLM and the like. The model
gets spec.md, openapi.yaml, the requirements and the candidate format rules, and answers with
files as fenced code blocks whose opening line names the path (```python path=app.py). An
answer without files or without a Dockerfile, or one naming a path outside the workspace, is
answered with a corrective message and retried; token usage is summed over every attempt.
A ``prompt: verbatim`` task (imported BaxBench) is asked and parsed as BaxBench does instead.

Settings (rows of generators/settings.py) come from options (``--openai-*``) or the environment,
read when generating through the settings table:
BACKENDBENCH_OPENAI_BASE_URL (default https://api.openai.com/v1; e.g. http://localhost:8000/v1
for vLLM, http://localhost:11434/v1 for Ollama), BACKENDBENCH_OPENAI_API_KEY (environment only:
a key on the command line shows in process lists), BACKENDBENCH_OPENAI_TIMEOUT (seconds per
request), BACKENDBENCH_OPENAI_ATTEMPTS (answers per sample), BACKENDBENCH_OPENAI_MAX_TOKENS,
BACKENDBENCH_OPENAI_TEMPERATURE and BACKENDBENCH_OPENAI_PRICE ("IN/OUT" USD per million input
and output tokens, for cost_usd).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from ..tasks import VisibleTask
from .answer import MalformedAnswer, baxbench_targets, check_files, parse_answer  # the answer formats (also importable from here)
from .orchestrate import GenerationError, ProviderError
from .settings import SETTING_OF_FIELD, env_var

MODEL_PREFIX = "openai:"
DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_ATTEMPTS = 3
CONNECT_TIMEOUT_S = 10.0
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
MAX_INLINE_ASSET_BYTES = 20_000
ENV = {field: env_var(field) for field in SETTING_OF_FIELD}
"""``OpenAISettings`` field -> its ``BACKENDBENCH_OPENAI_*`` variable (from the settings table), for messages."""

SYSTEM_PROMPT = (
    "You are a senior backend engineer. You write complete, working services that are built "
    "with Docker and tested only from outside, over HTTP, against their specification. "
    "You answer with the service's files in the exact format the user asks for."
)

BAXBENCH_SYSTEM_PROMPT = "You are an experienced full-stack developer"
"""BaxBench's ``_SYSTEM_PROMPT`` (src/prompts.py), sent with a ``prompt: verbatim`` task's spec.md."""

FORMAT_RULES = """\
## Candidate format (every rule must hold)

1. A `Dockerfile` at the root whose first two lines are exactly:

       ARG BASE_IMAGE=python:3.12-slim
       FROM ${BASE_IMAGE}

   The harness may substitute another Python base image through BASE_IMAGE. Install
   dependencies in the Dockerfile (e.g. `pip install -r requirements.txt`); the running
   service has no internet access.
2. The service listens on `0.0.0.0`, on the TCP port given in the `PORT` environment
   variable (default 8000), and answers its health path (see the specification) as soon as
   it is ready. If the specification says it uses PostgreSQL, it connects with the
   `DATABASE_URL` environment variable.
3. A `candidate.yaml` at the root containing `run: <command>`: the command that starts the
   service from the root folder without Docker (after `pip install -r requirements.txt`),
   e.g. `run: python app.py`.
4. Every file is complete: no placeholders, no "rest unchanged", no "...".
"""

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


@dataclass(frozen=True)
class OpenAISettings:
    """How to reach the server; ``None`` means "from the environment, else the default"."""

    base_url: str | None = None
    api_key: str | None = None
    timeout_s: float | None = None
    attempts: int | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    price: str | None = None
    reasoning_effort: str | None = None  # sent as reasoning_effort (BackendForge varies it per model)
    retry_backoff_s: float = 2.0
    environ: Mapping[str, str] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_config(cls, config: pytest.Config) -> OpenAISettings:
        """Settings from the ``--openai-*`` options (the settings table: option > environment > ini)."""
        from ..config import bench_config

        bench = bench_config(config)

        def option(name: str) -> Any:
            return bench[name]

        return cls(
            base_url=option("openai_base_url"),
            timeout_s=option("openai_timeout"),
            attempts=option("openai_attempts"),
            max_tokens=option("openai_max_tokens"),
            temperature=option("openai_temperature"),
            price=option("openai_price"),
            reasoning_effort=option("openai_reasoning_effort"),
        )

    def resolved(self) -> OpenAISettings:
        """Fill what options left open from the environment (read now, not at import) and defaults."""
        from ..config import environment_value

        def pick(name: str, default: Any) -> Any:
            value = getattr(self, name)
            if value is not None:
                return value
            try:  # through the settings table (generators/settings.py), parsed as its row says
                found = environment_value(SETTING_OF_FIELD[name], self.environ)
            except pytest.UsageError as err:
                raise GenerationError(str(err)) from err
            return default if found is None else found

        settings = replace(
            self,
            base_url=pick("base_url", DEFAULT_BASE_URL).rstrip("/"),
            api_key=pick("api_key", None),
            timeout_s=pick("timeout_s", DEFAULT_TIMEOUT_S),
            attempts=pick("attempts", DEFAULT_ATTEMPTS),
            max_tokens=pick("max_tokens", None),
            temperature=pick("temperature", None),
            price=pick("price", None),
            reasoning_effort=pick("reasoning_effort", None),
        )
        if settings.attempts is not None and settings.attempts < 1:
            raise GenerationError(f"openai attempts {settings.attempts}: expected at least 1")
        settings.prices()  # a malformed price is reported before any tokens are spent
        return settings

    def prices(self) -> tuple[float, float] | None:
        """(USD per million input tokens, per million output tokens), when a price is set."""
        if not self.price:
            return None
        left, sep, right = self.price.partition("/")
        try:
            prices = (float(left), float(right))
        except ValueError:
            prices = (-1.0, -1.0)
        if not sep or min(prices) < 0:
            raise GenerationError(f"openai price {self.price!r}: expected IN/OUT in USD per million tokens, e.g. 0.15/0.60")
        return prices


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


# --- the client ----------------------------------------------------------------------------


@dataclass
class Usage:
    """Tokens summed over every request of one sample (None while no answer reported usage)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    requests: int = 0

    def add(self, usage: Any) -> None:
        self.requests += 1
        if not isinstance(usage, dict):
            return
        for name in ("prompt_tokens", "completion_tokens"):
            value = usage.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, (getattr(self, name) or 0) + value)


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """One chat-completions answer; ``message`` is the assistant message to append to the history."""

    content: str
    finish_reason: str | None
    served_model: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    message: dict[str, Any] = field(default_factory=dict)


class ChatClient:
    """POSTs to ``<base_url>/chat/completions``; errors become ProviderError with a hint.

    A server that cannot be reached or keeps failing is the provider's fault, not the model's:
    ``ProviderError`` makes the sample a harness error (re-runnable) instead of a failed build.
    """

    def __init__(self, settings: OpenAISettings, model: str, session: requests.Session) -> None:
        self.settings = settings
        self.model = model
        self.session = session
        self.url = f"{settings.base_url}/chat/completions"
        # Transient failures (no connection, 429, 502-504) are retried by urllib3 with exponential
        # backoff and Retry-After; read timeouts are not (a long generation would run again).
        tries = max(1, settings.attempts or 1) - 1
        retry = Retry(
            total=tries, connect=tries, read=False, status=tries, other=0, allowed_methods=frozenset({"POST"}),
            status_forcelist=TRANSIENT_STATUS, backoff_factor=settings.retry_backoff_s, backoff_max=60.0,
            respect_retry_after_header=True, raise_on_status=False,
        )
        session.mount(self.url, HTTPAdapter(max_retries=retry))

    def complete(self, messages: list[dict[str, Any]], usage: Usage, tools: list[dict[str, Any]] | None = None) -> Completion:
        """One answer; transient failures (connection, 429, 502-504) are retried with backoff.

        With ``tools`` (OpenAI function definitions) the answer may carry ``tool_calls``.
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if self.settings.max_tokens is not None:
            body["max_tokens"] = self.settings.max_tokens
        if self.settings.temperature is not None:
            body["temperature"] = self.settings.temperature
        if self.settings.reasoning_effort is not None:
            body["reasoning_effort"] = self.settings.reasoning_effort
        headers = {"Content-Type": "application/json"}
        if self.settings.api_key:
            headers["Authorization"] = f"Bearer {self.settings.api_key}"
        try:
            response = self.session.post(self.url, json=body, headers=headers, timeout=(CONNECT_TIMEOUT_S, self.settings.timeout_s))
        except requests.Timeout as err:
            raise ProviderError(
                f"{self.url} gave no answer within {self.settings.timeout_s:g}s for model {self.model!r}; "
                f"a slow server or a long generation: raise --openai-timeout or {ENV['timeout_s']}"
            ) from err
        except requests.ConnectionError as err:
            raise ProviderError(
                f"cannot connect to {self.url}: {_first_line(err)}; is the server running? "
                f"Point --openai-base-url or {ENV['base_url']} at its API root (e.g. http://localhost:8000/v1)"
            ) from err
        if response.status_code >= 400:
            raise _error_for_status(response.status_code)(self._http_error(response))
        return self._completion(response, usage)

    def _http_error(self, response: requests.Response) -> str:
        detail = response.text.strip()
        try:
            payload = response.json()
            error = payload.get("error") if isinstance(payload, dict) else None
            if isinstance(error, dict) and error.get("message"):
                detail = str(error["message"])
            elif isinstance(error, str):
                detail = error
        except ValueError:
            pass
        hint = {
            401: f"check {ENV['api_key']}",
            403: f"check {ENV['api_key']} and the model's access rights",
            404: f"check the base URL (the API root, usually ending in /v1) and the model name {self.model!r}",
            429: "rate-limited or out of quota",
        }.get(response.status_code, "the server failed; see its log")
        return f"{self.url} answered HTTP {response.status_code} for model {self.model!r}: {detail[:500] or response.reason} ({hint})"

    def _completion(self, response: requests.Response, usage: Usage) -> Completion:
        try:
            payload = response.json()
        except ValueError as err:
            raise GenerationError(
                f"{self.url} answered HTTP {response.status_code} with a body that is not JSON: {response.text[:200]!r}"
            ) from err
        usage.add(payload.get("usage") if isinstance(payload, dict) else None)
        choices = payload.get("choices") if isinstance(payload, dict) else None
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise GenerationError(f"{self.url} answered without choices (not a chat-completions answer): {str(payload)[:300]}")
        choice = choices[0]
        message = choice.get("message") or {}
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # some servers answer with content parts
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        served = payload.get("model")
        return Completion(
            content if isinstance(content, str) else "",
            choice.get("finish_reason"),
            served if isinstance(served, str) else None,
            _tool_calls(message.get("tool_calls") if isinstance(message, dict) else None),
            _history_message(message, content if isinstance(content, str) else ""),
        )


def _error_for_status(status: int) -> type[GenerationError]:
    """Auth, routing, rate limits and server failures are the provider's; other 4xx (a request
    too long for the context, say) are what the model's conversation caused."""
    return ProviderError if status in (401, 403, 404, 408, 429) or status >= 500 else GenerationError


def _tool_calls(raw: Any) -> tuple[ToolCall, ...]:
    """The answer's function calls, kept even when malformed (the loop answers those with a correction)."""
    if not isinstance(raw, list):
        return ()
    calls = []
    for index, call in enumerate(raw):
        if not isinstance(call, dict):
            calls.append(ToolCall(f"call_{index}", "", repr(call)))
            continue
        raw_function = call.get("function")
        function: dict[str, Any] = raw_function if isinstance(raw_function, dict) else {}
        arguments = function.get("arguments", "")
        calls.append(
            ToolCall(
                str(call.get("id") or f"call_{index}"),
                str(function.get("name") or ""),
                arguments if isinstance(arguments, str) else json.dumps(arguments),
            )
        )
    return tuple(calls)


def _history_message(message: Any, content: str) -> dict[str, Any]:
    """The assistant message as it goes back into the conversation (tool calls included)."""
    entry: dict[str, Any] = {"role": "assistant", "content": content}
    if isinstance(message, dict) and isinstance(message.get("tool_calls"), list) and message["tool_calls"]:
        entry["tool_calls"] = message["tool_calls"]
    return entry


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


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
