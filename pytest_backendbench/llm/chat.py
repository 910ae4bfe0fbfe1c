"""The OpenAI-compatible chat-completions client that generators and agents both talk through.

Works with the OpenAI API, vLLM, Ollama, llama.cpp's server, LiteLLM and the like: one POST to
``<base_url>/chat/completions`` per answer, transient failures retried with backoff, token usage
summed, tool calls parsed. A server that cannot be reached or keeps failing is the provider's
fault (``ProviderError``: a harness error, re-runnable), not the model's.

Settings (rows of llm/settings.py) come from options (``--openai-*``) or the environment:
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
from typing import Any

import pytest
import requests
from requests.adapters import HTTPAdapter
from urllib3.util import Retry

from .settings import SETTING_OF_FIELD, env_var

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_TIMEOUT_S = 600.0
DEFAULT_ATTEMPTS = 3
CONNECT_TIMEOUT_S = 10.0
TRANSIENT_STATUS = frozenset({429, 502, 503, 504})
ENV = {field: env_var(field) for field in SETTING_OF_FIELD}
"""``OpenAISettings`` field -> its ``BACKENDBENCH_OPENAI_*`` variable (from the settings table), for messages."""


class GenerationError(Exception):
    """A generator could not produce a candidate (an unusable answer, a server error).

    Raised by generators and the agent loop; ``metadata`` carries what was spent anyway (tokens,
    attempts), which is recorded next to the error in the sample's ``candidate.yaml``.
    """

    def __init__(self, message: str, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.metadata = dict(metadata or {})


class ProviderError(GenerationError):
    """The model's server failed (unreachable, 5xx, 401, quota), not the model's answer.

    The sample is recorded with ``generation.error_kind: harness``: its items become errors
    (re-runnable, never counted against the candidate) and ``--bench-resume`` generates it again.
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
    seed: int | None = None  # sent as seed (the judge samples reproducibly)
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
            try:  # through the settings table (llm/settings.py), parsed as its row says
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
        if self.settings.seed is not None:
            body["seed"] = self.settings.seed
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
