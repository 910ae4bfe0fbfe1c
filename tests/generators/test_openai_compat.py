"""The openai:<model> generator against a local chat-completions server started by the test."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pluggy
import pytest
import yaml

from pytest_backendbench import hookspecs
from pytest_backendbench.generators import register_builtin_generators
from pytest_backendbench.generators.answer import MalformedAnswer, check_files, parse_answer
from pytest_backendbench.generators.openai_compat import OpenAICompatGenerator
from pytest_backendbench.generators.orchestrate import generate_candidates
from pytest_backendbench.llm.chat import GenerationError, OpenAISettings
from pytest_backendbench.tasks import Task, TaskCatalog

DATA = Path(__file__).parents[1] / "data"
RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")
NOTES_APP = (DATA / "bench" / "oracles" / "notes" / "reference" / "app.py").read_text()
DOCKERFILE = 'ARG BASE_IMAGE=python:3.12-slim\nFROM ${BASE_IMAGE}\nWORKDIR /app\nCOPY app.py .\nCMD ["python", "app.py"]\n'
GOOD_ANSWER = f"""I'll write a small stdlib service.

```python path=app.py
{NOTES_APP}```

```dockerfile path=Dockerfile
{DOCKERFILE}```

```yaml path=candidate.yaml
run: python app.py
```
"""


@dataclass
class Reply:
    """One scripted answer of the fake server."""

    content: str = GOOD_ANSWER
    status: int = 200
    usage: dict[str, int] | None = field(default_factory=lambda: {"prompt_tokens": 1000, "completion_tokens": 400})
    delay_s: float = 0.0
    finish_reason: str = "stop"
    raw: str | None = None


class FakeChatServer:
    """Speaks POST /v1/chat/completions on 127.0.0.1, answering from a script; records every request."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.requests.append(body)
                server.headers.append(dict(self.headers))
                server.paths.append(self.path)
                reply = server.replies.pop(0) if len(server.replies) > 1 else server.replies[0]
                time.sleep(reply.delay_s)
                if reply.raw is not None:
                    data = reply.raw.encode()
                elif reply.status != 200:
                    data = json.dumps({"error": {"message": reply.content, "type": "server_error"}}).encode()
                else:
                    payload: dict[str, Any] = {
                        "id": "chatcmpl-1",
                        "object": "chat.completion",
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": reply.content}, "finish_reason": reply.finish_reason}
                        ],
                    }
                    if reply.usage is not None:
                        payload["usage"] = {**reply.usage, "total_tokens": sum(reply.usage.values())}
                    data = json.dumps(payload).encode()
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def chat_server() -> Iterator[Any]:
    servers: list[FakeChatServer] = []

    def start(*replies: Reply) -> FakeChatServer:
        server = FakeChatServer(list(replies) or [Reply()])
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def notes(tmp_path: Path) -> Task:
    import shutil

    shutil.copytree(DATA / "bench", tmp_path / "bench")
    return TaskCatalog(tmp_path / "bench").load("notes")


def settings(server: FakeChatServer, **overrides: Any) -> OpenAISettings:
    values: dict[str, Any] = {"base_url": server.base_url, "api_key": "sk-test", "retry_backoff_s": 0.0, "environ": {}}
    values.update(overrides)
    return OpenAISettings(**values)


def generate(notes: Task, out: Path, generator_settings: OpenAISettings, model: str = "openai:tiny-coder") -> Path:
    pm = pluggy.PluginManager("pytest")
    pm.add_hookspecs(hookspecs)
    register_builtin_generators(pm, notes.benchmark_dir.parent.parent, generator_settings)
    [workspace] = generate_candidates(pm.hook, [notes], out, model, 1)
    return workspace


def generation_of(workspace: Path) -> dict[str, Any]:
    return dict(yaml.safe_load((workspace / "candidate.yaml").read_text())["generation"])


def test_a_good_answer_becomes_a_candidate_that_passes(pytester: pytest.Pytester, bench: Path, chat_server: Any) -> None:
    server = chat_server(Reply())
    notes = TaskCatalog(bench).load("notes")
    workspace = generate(notes, bench / "generated", settings(server, price="1/2"))
    assert sorted(p.name for p in workspace.iterdir()) == ["Dockerfile", "app.py", "candidate.yaml"]
    assert (workspace / "app.py").read_text() == NOTES_APP
    generation = generation_of(workspace)
    assert generation["model"] == "openai:tiny-coder" and "served_model" not in generation
    assert (generation["tokens_in"], generation["tokens_out"], generation["attempts"]) == (1000, 400, 1)
    assert generation["cost_usd"] == pytest.approx((1000 * 1 + 400 * 2) / 1e6)

    [request] = server.requests
    assert server.paths == ["/v1/chat/completions"]
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert request["model"] == "tiny-coder" and "max_tokens" not in request
    prompt = request["messages"][1]["content"]
    assert request["messages"][0]["role"] == "system" and request["messages"][1]["role"] == "user"
    assert notes.spec_path.read_text().strip() in prompt
    assert notes.openapi_path is not None and notes.openapi_path.read_text().rstrip() in prompt
    for rid, text in notes.requirements.items():
        assert f"**{rid}**: {text}" in prompt
    for rule in ("ARG BASE_IMAGE=python:3.12-slim", "FROM ${BASE_IMAGE}", "`PORT`", "run: <command>", "```python path=app.py"):
        assert rule in prompt
    assert "test_other_user_cannot_read" not in prompt and "oracles" not in prompt

    pytester.runpytest(f"--candidate={bench / 'generated'}", "--bench-report-dir=report", *RUN).assert_outcomes(passed=7)
    report = json.loads((bench / "report" / "report.json").read_text())
    assert report["summary"]["generation"]["models"] == ["openai:tiny-coder"]
    assert report["summary"]["generation"]["tokens_out_per_task"] == 400


def test_a_malformed_answer_is_corrected_and_usage_is_summed(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(
        Reply(content="Sure! First I will design the data model, then the routes.", usage={"prompt_tokens": 900, "completion_tokens": 30}),
        Reply(content=f"```python path=app.py\n{NOTES_APP}```\n", usage={"prompt_tokens": 950, "completion_tokens": 300}),
        Reply(usage={"prompt_tokens": 1300, "completion_tokens": 420}),
    )
    workspace = generate(notes, tmp_path / "out", settings(server, attempts=3))
    generation = generation_of(workspace)
    assert (generation["tokens_in"], generation["tokens_out"], generation["attempts"]) == (900 + 950 + 1300, 30 + 300 + 420, 3)
    assert "error" not in generation and (workspace / "Dockerfile").read_text() == DOCKERFILE
    second, third = server.requests[1]["messages"], server.requests[2]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[2]["content"].startswith("Sure! First I will design")
    assert "it contains no files" in second[3]["content"] and "```python path=app.py" in second[3]["content"]
    assert "no Dockerfile at the root of the service (files given: app.py)" in third[5]["content"]


def test_attempts_run_out_into_a_recorded_error_with_the_tokens_spent(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    chat_server_instance = chat_server(Reply(content="I cannot help with that.", usage={"prompt_tokens": 500, "completion_tokens": 7}))
    workspace = generate(notes, tmp_path / "out", settings(chat_server_instance, attempts=2))
    assert sorted(p.name for p in workspace.iterdir()) == ["candidate.yaml"]
    generation = generation_of(workspace)
    assert (
        generation["error"]
        == "no usable answer from 'tiny-coder' in 2 attempt(s); the last one: it contains no files: no fenced code block names its path"
    )
    assert (generation["tokens_in"], generation["tokens_out"], generation["attempts"]) == (1000, 14, 2)


def test_paths_escaping_the_workspace_are_rejected_and_retried(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    evil = f"```python path=../escape.py\nprint('pwned')\n```\n```dockerfile path=Dockerfile\n{DOCKERFILE}```\n"
    server = chat_server(Reply(content=evil), Reply(content=evil.replace("../escape.py", "/tmp/abs.py")), Reply())
    workspace = generate(notes, tmp_path / "out", settings(server, attempts=3))
    assert not (workspace.parent / "escape.py").exists() and not (tmp_path / "escape.py").exists()
    assert not Path("/tmp/abs.py").exists()
    assert "the path '../escape.py' is not a plain relative path" in server.requests[1]["messages"][-1]["content"]
    assert "the path '/tmp/abs.py' is not a plain relative path" in server.requests[2]["messages"][-1]["content"]
    assert (workspace / "app.py").read_text() == NOTES_APP


def test_a_truncated_answer_asks_for_a_shorter_one(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(content=f"```python path=app.py\n{NOTES_APP[:200]}", finish_reason="length"), Reply())
    generate(notes, tmp_path / "out", settings(server, attempts=2, max_tokens=4096, temperature=0.2))
    assert server.requests[0]["max_tokens"] == 4096 and server.requests[0]["temperature"] == 0.2
    correction = server.requests[1]["messages"][-1]["content"]
    assert "the code block of app.py is never closed" in correction and "cut off at the token limit" in correction


def test_http_500_is_a_clear_error(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(status=500, content="CUDA out of memory"))
    generator = OpenAICompatGenerator(settings(server))
    with pytest.raises(GenerationError) as info:
        generator.pytest_backendbench_generate(task=notes.visible, workspace=tmp_path, model="openai:tiny-coder")
    assert str(info.value) == (
        f"{server.base_url}/chat/completions answered HTTP 500 for model 'tiny-coder': CUDA out of memory (the server failed; see its log)"
    )
    assert len(server.requests) == 1  # a 500 is not retried
    workspace = generate(notes, tmp_path / "out", settings(server))
    assert "answered HTTP 500" in generation_of(workspace)["error"] and not (workspace / "Dockerfile").exists()


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (401, "check BACKENDBENCH_OPENAI_API_KEY"),
        (404, "check the base URL (the API root, usually ending in /v1) and the model name 'tiny-coder'"),
    ],
)
def test_http_errors_say_what_to_check(notes: Task, tmp_path: Path, chat_server: Any, status: int, hint: str) -> None:
    server = chat_server(Reply(status=status, content="nope"))
    with pytest.raises(GenerationError, match=re.escape(f"answered HTTP {status} for model 'tiny-coder': nope ({hint})")):
        OpenAICompatGenerator(settings(server)).pytest_backendbench_generate(
            task=notes.visible, workspace=tmp_path, model="openai:tiny-coder"
        )


def test_transient_errors_are_retried(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(status=503, content="loading model"), Reply(status=429, content="slow down"), Reply())
    workspace = generate(notes, tmp_path / "out", settings(server, attempts=3))
    assert len(server.requests) == 3 and (workspace / "Dockerfile").is_file()
    assert generation_of(workspace)["tokens_in"] == 1000  # only the answer that came reported usage


def test_a_slow_server_times_out_with_a_clear_error(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(delay_s=2.0))
    started = time.monotonic()
    with pytest.raises(GenerationError) as info:
        OpenAICompatGenerator(settings(server, timeout_s=0.3)).pytest_backendbench_generate(
            task=notes.visible, workspace=tmp_path, model="openai:tiny-coder"
        )
    assert time.monotonic() - started < 1.5
    assert "gave no answer within 0.3s for model 'tiny-coder'" in str(info.value)
    assert "--openai-timeout or BACKENDBENCH_OPENAI_TIMEOUT" in str(info.value)


def test_an_unreachable_server_is_a_clear_error(notes: Task, tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    generator = OpenAICompatGenerator(OpenAISettings(base_url=f"http://127.0.0.1:{port}/v1", retry_backoff_s=0.0, attempts=2, environ={}))
    with pytest.raises(GenerationError, match=rf"cannot connect to http://127.0.0.1:{port}/v1/chat/completions: .*is the server running\?"):
        generator.pytest_backendbench_generate(task=notes.visible, workspace=tmp_path, model="openai:tiny-coder")


def test_an_answer_that_is_not_chat_completions_is_a_clear_error(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(raw="<html>proxy login</html>"))
    with pytest.raises(GenerationError, match=r"answered HTTP 200 with a body that is not JSON: '<html>proxy login</html>'"):
        OpenAICompatGenerator(settings(server)).pytest_backendbench_generate(
            task=notes.visible, workspace=tmp_path, model="openai:tiny-coder"
        )


def test_settings_come_from_the_environment_when_options_leave_them_open(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(usage=None))
    environ = {
        "BACKENDBENCH_OPENAI_BASE_URL": server.base_url + "/",
        "BACKENDBENCH_OPENAI_API_KEY": "sk-env",
        "BACKENDBENCH_OPENAI_MAX_TOKENS": "2048",
    }
    workspace = generate(notes, tmp_path / "out", OpenAISettings(environ=environ))
    assert server.headers[0]["Authorization"] == "Bearer sk-env" and server.requests[0]["max_tokens"] == 2048
    generation = generation_of(workspace)
    assert generation["tokens_in"] is None and generation["cost_usd"] is None  # the server reported no usage
    with pytest.raises(GenerationError, match=r"BACKENDBENCH_OPENAI_TIMEOUT='soon': expected a number"):
        OpenAISettings(environ={"BACKENDBENCH_OPENAI_TIMEOUT": "soon"}).resolved()
    with pytest.raises(GenerationError, match=r"openai price '3 dollars': expected IN/OUT"):
        OpenAISettings(price="3 dollars", environ={}).resolved()


def test_other_models_are_left_to_other_generators(notes: Task, tmp_path: Path) -> None:
    generator = OpenAICompatGenerator(OpenAISettings(environ={}))
    assert generator.pytest_backendbench_generate(task=notes.visible, workspace=tmp_path, model="reference") is None
    with pytest.raises(GenerationError, match="needs the server's model name after the colon"):
        generator.pytest_backendbench_generate(task=notes.visible, workspace=tmp_path, model="openai:")


# --- the answer format ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "```python path=app.py\nprint(1)\n```\n```dockerfile path=Dockerfile\nFROM x\n```",
        '```python path="app.py"\nprint(1)\n```\n```Dockerfile\nFROM x\n```',
        "```python:app.py\nprint(1)\n```\n```dockerfile\nFROM x\n```",
        "### app.py\n```python\nprint(1)\n```\n### Dockerfile\n\n```dockerfile\nFROM x\n```",
        "**app.py**\n```python\nprint(1)\n```\nFile: `Dockerfile`\n```\nFROM x\n```",
        "1. `app.py`:\n~~~python\nprint(1)\n~~~\n2. Dockerfile:\n```docker\nFROM x\n```",
        "```python\n# file: app.py\nprint(1)\n```\n```\n# path: Dockerfile\nFROM x\n```",
        "<think>```python path=draft.py\nx\n```</think>\n```app.py\nprint(1)\n```\n```dockerfile path=./Dockerfile\nFROM x\n```",
    ],
    ids=[
        "documented",
        "quoted-and-bare-name",
        "lang-colon",
        "heading",
        "bold-and-label",
        "numbered-tilde",
        "comment-line",
        "think-and-bare",
    ],
)
def test_the_parser_accepts_a_tolerant_superset(answer: str, tmp_path: Path) -> None:
    files = {f.path.removeprefix("./"): f.content for f in parse_answer(answer)}
    assert files == {"app.py": "print(1)\n", "Dockerfile": "FROM x\n"}
    assert set(check_files(parse_answer(answer), tmp_path)) == {tmp_path.resolve() / "app.py", tmp_path.resolve() / "Dockerfile"}


def test_the_parser_keeps_nested_fences_and_ignores_unnamed_blocks() -> None:
    answer = (
        "Run it with:\n```bash\npip install -r requirements.txt\n```\n"
        "````markdown path=README.md\n# Notes\n```bash\npython app.py\n```\n````\n"
        "```text path=requirements.txt\nflask==3.0.0\n```\n"
    )
    files = {f.path: f.content for f in parse_answer(answer)}
    assert files == {"README.md": "# Notes\n```bash\npython app.py\n```\n", "requirements.txt": "flask==3.0.0\n"}


@pytest.mark.parametrize("path", ["../x.py", "/etc/passwd", "a/../../x", "C:/x.py", "a\\b.py", "a//b.py"])
def test_paths_that_could_escape_are_malformed(path: str, tmp_path: Path) -> None:
    answer = f"```python path={path}\nx = 1\n```\n```dockerfile path=Dockerfile\nFROM x\n```"
    with pytest.raises(MalformedAnswer, match="is not a plain relative path"):
        check_files(parse_answer(answer), tmp_path)


def test_the_reasoning_effort_is_sent_only_when_given(notes: Task, tmp_path: Path, chat_server: Any) -> None:
    server = chat_server(Reply(), Reply())
    generate(notes, tmp_path / "high", settings(server, reasoning_effort="high"))
    generate(notes, tmp_path / "default", settings(server))
    assert server.requests[0]["reasoning_effort"] == "high"
    assert "reasoning_effort" not in server.requests[1]  # the server's own default
