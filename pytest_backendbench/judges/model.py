"""The judge model: any OpenAI-compatible chat server, every answer cached in the run's folder.

A judge asks through ``JudgeModel.ask``; the real one (``OpenAIJudgeModel``) posts through
llm/chat.py's ``ChatClient`` and keeps every answer in ``<report dir>/judge-cache/<digest>.json``,
keyed by the sha256 of (model, temperature, seed, messages with their image bytes, tools). A
re-run or ``--bench-resume`` with the same judge replays those answers (``replayed=True``) and
calls no server, so a judged run is reproducible and paid for once.

Every request carries the header ``X-Backendbench-Purpose`` (what the answer is for, e.g.
``gui-step``, ``api-explore``, ``db-verdict``): scripted test servers answer by it; real servers
ignore it. A server that fails is a ``JudgeServerError`` (a harness error, never a verdict).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import requests

from ..errors import HarnessError
from ..llm.chat import ChatClient, GenerationError, OpenAISettings, ToolCall, Usage

PURPOSE_HEADER = "X-Backendbench-Purpose"
CACHE_FOLDER = "judge-cache"
CACHE_FORMAT = 1


class JudgeServerError(HarnessError):
    """The judge's server failed (unreachable, refused the key, 5xx): the case is a harness error."""


def image_part(data: bytes, kind: str = "png") -> dict[str, Any]:
    """An image as a part of an OpenAI chat message (a base64 data URL), as vision models take it."""
    return {"type": "image_url", "image_url": {"url": f"data:image/{kind};base64," + base64.b64encode(data).decode("ascii")}}


@dataclass(frozen=True)
class JudgeAnswer:
    """One answer of the judge model."""

    text: str
    tokens_in: int
    tokens_out: int
    replayed: bool
    tool_calls: tuple[ToolCall, ...] = ()
    message: dict[str, Any] = field(default_factory=dict)  # the assistant message, to append to the history


class JudgeModel(Protocol):
    """What a judge asks; the real one is ``OpenAIJudgeModel``, tests pass scripted ones."""

    name: str

    def ask(self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None) -> JudgeAnswer:
        """One answer to the conversation; raises ``JudgeServerError`` when the server fails."""
        ...


@dataclass(frozen=True)
class JudgeServer:
    """How to reach the judge's server and how to sample (settings rows of judges/settings.py)."""

    model: str
    base_url: str
    api_key: str | None = None
    temperature: float | None = 0.0
    seed: int | None = 0
    timeout_s: float = 300.0
    max_tokens: int | None = None
    attempts: int = 3  # tries on a transient failure (429, 502-504, no connection)

    def chat_settings(self) -> OpenAISettings:
        """The chat client's settings (retries on 429/5xx as for generation)."""
        return OpenAISettings(
            base_url=self.base_url.rstrip("/"), api_key=self.api_key, timeout_s=self.timeout_s, attempts=self.attempts,
            temperature=self.temperature, max_tokens=self.max_tokens, seed=self.seed,
        )


def cache_key(model: str, temperature: float | None, seed: int | None, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    """The digest an answer is kept under: images are inside the messages as data URLs, so their bytes count."""
    payload = {"model": model, "temperature": temperature, "seed": seed, "messages": messages, "tools": tools or []}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class JudgeCache:
    """``<report dir>/judge-cache/<digest>.json``: one answer per file, written atomically (xdist workers share it)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored answer, or None (a torn or foreign file is a miss, asked again)."""
        path = self.folder / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and data.get("format") == CACHE_FORMAT else None

    def put(self, key: str, data: dict[str, Any]) -> None:
        """Keep an answer (a temporary file renamed into place: a reader never sees half of it)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.folder, prefix=f".{key}.", suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"format": CACHE_FORMAT, **data}, out, ensure_ascii=False)
        os.replace(temporary, self.folder / f"{key}.json")


def _answer_from(data: dict[str, Any], replayed: bool) -> JudgeAnswer:
    calls = tuple(ToolCall(str(c.get("id", "")), str(c.get("name", "")), str(c.get("arguments", ""))) for c in data.get("tool_calls") or [])
    return JudgeAnswer(
        text=str(data.get("text", "")), tokens_in=int(data.get("tokens_in") or 0), tokens_out=int(data.get("tokens_out") or 0),
        replayed=replayed, tool_calls=calls, message=dict(data.get("message") or {"role": "assistant", "content": data.get("text", "")}),
    )


class OpenAIJudgeModel:
    """``--bench-judge=openai:<model>``: asks an OpenAI-compatible server, through the run's cache.

    With ``cache`` and ``offline=True`` a miss is an error instead of a request (a replay that must
    not reach any server). One instance may be shared by threads; each request has its own session.
    """

    def __init__(self, server: JudgeServer, cache: JudgeCache | None = None, *, offline: bool = False) -> None:
        self.server = server
        self.name = f"openai:{server.model}"
        self.cache = cache
        self.offline = offline
        self._settings = server.chat_settings()

    def ask(self, messages: list[dict[str, Any]], *, purpose: str, tools: list[dict[str, Any]] | None = None) -> JudgeAnswer:
        """The cached answer when there is one, else the server's (then cached)."""
        key = cache_key(self.server.model, self.server.temperature, self.server.seed, messages, tools)
        if self.cache is not None:
            stored = self.cache.get(key)
            if stored is not None:
                return _answer_from(stored, replayed=True)
        if self.offline:
            raise JudgeServerError(f"no cached judge answer for this {purpose!r} request (digest {key[:12]}) and the judge is offline (replay only)")
        usage = Usage()
        with requests.Session() as session:
            session.headers[PURPOSE_HEADER] = purpose
            client = ChatClient(self._settings, self.server.model, session)
            try:
                completion = client.complete(messages, usage, tools)
            except GenerationError as err:
                raise JudgeServerError(f"the judge's server failed: {err}") from err
        data = {
            "purpose": purpose,
            "text": completion.content,
            "tokens_in": usage.prompt_tokens or 0,
            "tokens_out": usage.completion_tokens or 0,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in completion.tool_calls],
            "message": completion.message,
        }
        if self.cache is not None:
            self.cache.put(key, data)
        return _answer_from(data, replayed=False)


def check_judge_server(server: JudgeServer, timeout_s: float = 10.0) -> str | None:
    """Why the judge's server cannot be used (one line), or None: asked once before collection.

    ``GET <base_url>/models``: no connection or a refused key (401/403) is a problem; a server
    without that route (404/405) is given the benefit of the doubt (its first answer will tell).
    """
    url = f"{server.base_url.rstrip('/')}/models"
    headers = {"Authorization": f"Bearer {server.api_key}"} if server.api_key else {}
    try:
        response = requests.get(url, headers=headers, timeout=timeout_s)
    except requests.RequestException as err:
        first = (str(err).strip().splitlines() or [type(err).__name__])[0][:200]
        return f"--bench-judge: cannot reach the judge's server at {server.base_url} ({first}); start it or set --bench-judge-base-url / BACKENDBENCH_JUDGE_BASE_URL"
    if response.status_code in (401, 403):
        return f"--bench-judge: the judge's server at {server.base_url} refused the key (HTTP {response.status_code}); set BACKENDBENCH_JUDGE_API_KEY"
    if response.status_code >= 500:
        return f"--bench-judge: the judge's server at {server.base_url} fails (HTTP {response.status_code} on GET /models)"
    return None
