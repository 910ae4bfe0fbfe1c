"""openai:<model> on a ``prompt: verbatim`` task (imported BaxBench): its prompt as is, its parser.

The server is a scripted chat-completions endpoint on 127.0.0.1; the task is imported from the
BaxBench-format fixture of tests/importers.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pluggy
import pytest
import yaml

from pytest_backendbench import hookspecs
from pytest_backendbench.generators import register_builtin_generators
from pytest_backendbench.generators.answer import MalformedAnswer, baxbench_targets, parse_baxbench_answer
from pytest_backendbench.generators.openai_compat import BAXBENCH_SYSTEM_PROMPT
from pytest_backendbench.generators.orchestrate import generate_candidates
from pytest_backendbench.importers.baxbench import import_baxbench
from pytest_backendbench.llm.chat import OpenAISettings
from pytest_backendbench.tasks import Task, TaskCatalog

MINI = Path(__file__).parents[1] / "importers" / "data" / "baxbench-mini"
VAULT = "baxbench-vault-python-flask"
VAULT_APP = (MINI / "candidates" / "vault-good" / "app.py").read_text()


class ScriptedServer:
    """POST /v1/chat/completions answered with the given contents in turn; records the requests."""

    def __init__(self, *contents: str) -> None:
        self.contents = list(contents)
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                server.requests.append(body)
                content = server.contents.pop(0) if len(server.contents) > 1 else server.contents[0]
                data = json.dumps(
                    {
                        "model": body["model"],
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 700, "completion_tokens": 300},
                    }
                ).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ScriptedServer] = []

    def start(*contents: str) -> ScriptedServer:
        servers.append(ScriptedServer(*contents))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def vault(tmp_path: Path) -> Task:
    import_baxbench(MINI, tmp_path / "bench")
    return TaskCatalog(tmp_path / "bench").load(VAULT)


def generate(task: Task, out: Path, server: ScriptedServer) -> Path:
    pm = pluggy.PluginManager("pytest")
    pm.add_hookspecs(hookspecs)
    settings = OpenAISettings(base_url=server.base_url, api_key="sk-test", attempts=3, retry_backoff_s=0.0, environ={})
    register_builtin_generators(pm, task.benchmark_dir.parent.parent, settings)
    [workspace] = generate_candidates(pm.hook, [task], out, "openai:tiny-coder", 1)
    return workspace


def test_the_model_gets_baxbench_s_prompt_as_is_and_its_code_block_becomes_app_py(vault: Task, tmp_path: Path, serve: Any) -> None:
    server = serve(f"Here is the app.\n<CODE>\n{VAULT_APP}\n</CODE>\nIt stores salted hashes.")
    workspace = generate(vault, tmp_path / "out", server)
    [request] = server.requests
    assert request["messages"] == [
        {"role": "system", "content": BAXBENCH_SYSTEM_PROMPT},
        {"role": "user", "content": (vault.benchmark_dir / "spec.md").read_text()},
    ]
    assert vault.visible.code_files == ("app.py",)
    assert (workspace / "app.py").read_text() == VAULT_APP.strip()  # BaxBench's parser strips the block
    assert not (workspace / "Dockerfile").exists()  # the task supplies the image


def test_an_answer_baxbench_cannot_parse_fails_the_sample_without_a_correction(vault: Task, tmp_path: Path, serve: Any) -> None:
    server = serve("I would use Flask with a users table.", f"```python\n{VAULT_APP}\n```\n")
    workspace = generate(vault, tmp_path / "out", server)
    assert len(server.requests) == 1  # BaxBench asks once: an unparsable answer is a failed sample
    generation = yaml.safe_load((workspace / "candidate.yaml").read_text())["generation"]
    assert "BaxBench's parser found no code" in generation["error"]
    assert not (workspace / "app.py").exists()


def test_single_file_answers_take_the_first_non_bash_fence_else_the_first_code_block() -> None:
    answer = "```bash\npip install flask\n```\n```python\n**print(1)**\n```\n```python\nprint(2)\n```\n<CODE>print(3)</CODE>"
    assert [(f.path, f.content) for f in parse_baxbench_answer(answer, ("app.py",))] == [("app.py", "print(1)")]
    assert [(f.path, f.content) for f in parse_baxbench_answer("<CODE>\nconst a = 1;\n</CODE>", ("app.js",))] == [("app.js", "const a = 1;")]
    with pytest.raises(MalformedAnswer):
        parse_baxbench_answer("```\nno language, no CODE tag\n```", ("app.py",))


def test_multi_file_answers_pair_filepaths_with_blocks_in_order(tmp_path: Path) -> None:
    tagged = "<FILEPATH>\nsrc/main.rs\n</FILEPATH>\n<CODE>\nfn main() {}\n</CODE>\n<FILEPATH>Cargo.toml</FILEPATH>\n<CODE>\n```toml\n[package]\n```\n</CODE>"
    assert [(f.path, f.content) for f in parse_baxbench_answer(tagged, ())] == [("src/main.rs", "fn main() {}"), ("Cargo.toml", "[package]")]
    headed = "### **main.go**\n```go\npackage main\n```\n### go.mod\n```text\nmodule app\n```\n"
    assert [(f.path, f.content) for f in parse_baxbench_answer(headed, ())] == [("main.go", "package main"), ("go.mod", "module app")]
    with pytest.raises(MalformedAnswer, match="do not pair up"):
        parse_baxbench_answer("<FILEPATH>a.go</FILEPATH><FILEPATH>b.go</FILEPATH><CODE>x</CODE>", ())
    with pytest.raises(MalformedAnswer, match="outside|plain relative"):
        baxbench_targets("<FILEPATH>../escape.go</FILEPATH><CODE>x</CODE>", (), tmp_path)
