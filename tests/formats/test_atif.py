"""ATIF documents the harness writes, checked against the ``atif`` package's models.

The built-in loop's and each CLI's conversions are checked on real runs (tests/agents); here the
cases no real run shows cheaply: a ``cmd:`` agent whose log the harness cannot read, and a
document the models reject.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_backendbench.agents.transcript import TranscriptWriter
from pytest_backendbench.formats import atif


def test_a_cli_whose_log_is_unknown_gets_the_proxy_calls_and_its_output(tmp_path: Path) -> None:
    writer = TranscriptWriter(tmp_path)
    writer.write("start", model="cmd:half:m", command="half-agent", agent_version=None)
    writer.write("message", role="user", content="Build notes")
    writer.write("action", step=1, action="command", command="half-agent", exit_code=3, observation="wrote app.py\n")
    writer.write("proxy", model_calls=[{"path": "/v1/chat/completions", "status": 200, "seconds": 0.1, "tokens_in": 1000, "tokens_out": 100}])
    (tmp_path / "trajectory").mkdir()
    (tmp_path / "trajectory" / "own.log").write_text("its own words\n")
    writer.write("trajectory", files=["trajectory/own.log"])
    writer.write("end", exit_reason="error", cost_usd=0.0012)
    writer.close("notes")

    document = json.loads((tmp_path / atif.TRAJECTORY_FILE).read_text())
    assert atif.validate(document)
    assert document["agent"] == {"name": "half", "version": "unknown", "model_name": "m"}
    assert [s["source"] for s in document["steps"]] == ["user", "agent", "system"]
    assert document["steps"][1]["metrics"] == {"prompt_tokens": 1000, "completion_tokens": 100}
    assert document["steps"][2]["observation"]["results"][0]["content"] == "wrote app.py\n"
    assert document["final_metrics"] == {"total_steps": 3, "total_prompt_tokens": 1000, "total_completion_tokens": 100, "total_cost_usd": 0.0012}


def test_the_models_reject_what_atif_forbids() -> None:
    builder = atif.TrajectoryBuilder("a", "1")
    builder.add("user", "hi", metrics={"prompt_tokens": 1})  # metrics are agent-only
    with pytest.raises(atif.AtifError, match="only valid on `source='agent'` steps"):
        atif.validate(builder.document())
    assert atif.parse_arguments('{"command": "ls"}') == {"command": "ls"}
    assert atif.parse_arguments("not json") == {"input": "not json"}
