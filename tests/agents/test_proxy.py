"""The metering proxy against a real scripted server: forwarding, metering, credentials.

Every protocol a built-in CLI speaks goes through it (chat completions plain and streamed,
the Anthropic Messages API streamed); calls that are not model calls pass unmetered; the
sample's key becomes the real key upstream and a CLI's own key passes unchanged; an upstream
that is down is a 502 that still counts as a call (the CLI did try the model).
"""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import requests

from pytest_backendbench.agents.proxy import MeteringProxy, usage_of

sys.path.insert(0, str(Path(__file__).parent))  # importlib mode: helpers next to tests are imported by path
from protocol_servers import USAGE_IN, USAGE_OUT, ScriptedModelServer, Step


def test_usage_is_read_in_every_protocol() -> None:
    assert usage_of({"usage": {"prompt_tokens": 7, "completion_tokens": 3}}) == (7, 3)
    assert usage_of({"usage": {"input_tokens": 5, "cache_read_input_tokens": 2, "output_tokens": 4}}) == (7, 4)
    assert usage_of({"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 1}}}) == (9, 1)
    assert usage_of({"type": "response.completed", "response": {"usage": {"input_tokens": 11, "output_tokens": 6}}}) == (11, 6)
    assert usage_of({"choices": []}) == (None, None) and usage_of("text") == (None, None)


def test_chat_completions_plain_and_streamed_are_forwarded_and_metered() -> None:
    with ScriptedModelServer([Step(bash="ls"), Step(text="done")]) as server, MeteringProxy(server.base_url, api_key="sk-real") as proxy:
        headers = {"Authorization": f"Bearer {proxy.token}"}
        plain = requests.post(f"{proxy.base_url}/chat/completions", json={"model": "m", "messages": []}, headers=headers, timeout=10)
        assert plain.status_code == 200 and plain.json()["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "bash"
        streamed = requests.post(f"{proxy.base_url}/chat/completions", json={"model": "m", "messages": [], "stream": True}, headers=headers, timeout=10)
        events = [json.loads(line[5:]) for line in streamed.text.splitlines() if line.startswith("data: {")]
        assert events[0]["choices"][0]["delta"]["content"] == "done" and streamed.text.rstrip().endswith("data: [DONE]")
        models = requests.get(f"{proxy.base_url}/models", headers=headers, timeout=10)
        assert models.json()["data"][0]["id"] == "scripted-1"
    assert proxy.meter.model_calls == 2  # GET /models is not a model call
    assert proxy.meter.tokens() == (2 * USAGE_IN, 2 * USAGE_OUT)
    assert proxy.meter.cost((1.0, 2.0)) == round((2 * USAGE_IN + 2 * 2 * USAGE_OUT) / 1e6, 6)
    assert proxy.meter.cost(None) is None


def test_anthropic_messages_streamed_are_metered_and_the_key_is_swapped() -> None:
    seen: list[dict[str, str]] = []
    with ScriptedModelServer([Step(bash="ls")]) as server:
        original = server.httpd.RequestHandlerClass.do_POST

        def recording(handler: object) -> None:
            seen.append(dict(handler.headers))  # type: ignore[attr-defined]
            original(handler)  # type: ignore[arg-type]

        server.httpd.RequestHandlerClass.do_POST = recording  # type: ignore[method-assign]
        with MeteringProxy(server.base_url, api_key="sk-real") as proxy:
            body = {"model": "m", "max_tokens": 100, "stream": True, "messages": [], "tools": [{"name": "Bash"}]}
            answer = requests.post(f"{proxy.root_url}/v1/messages?beta=true", json=body, headers={"x-api-key": proxy.token}, timeout=10)
            assert "event: message_stop" in answer.text and '"name": "Bash"' in answer.text
            own = requests.post(f"{proxy.root_url}/v1/messages/count_tokens", json={}, headers={"x-api-key": "sk-users-own"}, timeout=10)
            assert own.json() == {"input_tokens": USAGE_IN}
    assert proxy.meter.model_calls == 1 and proxy.meter.tokens() == (USAGE_IN, USAGE_OUT)
    assert seen[0]["x-api-key"] == "sk-real" and seen[1]["x-api-key"] == "sk-users-own"
    assert proxy.token not in json.dumps(seen)


def test_an_upstream_that_is_down_is_a_502_that_counts_as_a_call() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with MeteringProxy(f"http://127.0.0.1:{port}/v1") as proxy:
        answer = requests.post(f"{proxy.base_url}/chat/completions", json={}, timeout=30)
        outside = requests.post(f"{proxy.root_url}/other", json={}, timeout=10)
    assert answer.status_code == 502 and f"cannot reach http://127.0.0.1:{port}/v1" in answer.json()["error"]["message"]
    assert outside.status_code == 404
    assert proxy.meter.model_calls == 1 and proxy.meter.calls[0].status == 502 and proxy.meter.tokens() == (None, None)
