"""task.yaml, candidate.yaml and mock.yaml are validated by JSON Schemas (file_schemas.py) whose
errors still name the file, the field, what was found and what is expected."""

from __future__ import annotations

from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from pytest_backendbench.candidates import load_candidate_yaml
from pytest_backendbench.errors import BackendBenchFormatError
from pytest_backendbench.file_schemas import SCHEMAS
from pytest_backendbench.runtime.base import load_mock
from pytest_backendbench.tasks import load_task


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_the_schemas_are_valid_json_schemas(name: str) -> None:
    Draft202012Validator.check_schema(SCHEMAS[name])


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "spec.md").write_text("# notes\n")
    (folder / "openapi.yaml").write_text("openapi: 3.0.3\n")
    return folder


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("title: x\n", "task.yaml: id: missing; expected the task id, equal to the folder name"),
        ("- a\n", "task.yaml: expected a mapping with id, title, kind, port, requirements"),
        ("id: notes\ntitle: x\nport: http\n", "task.yaml: port: got 'http'; expected a TCP port number (1-65535)"),
        ("id: notes\ntitle: x\nport: true\n", "task.yaml: port: got True; expected a TCP port number (1-65535)"),
        ("id: notes\ntitle: x\nkind: mobile\n", "task.yaml: kind: got 'mobile'; expected one of backend, frontend, fullstack"),
        ("id: notes\ntitle: x\nhealth: {timeout_s: -1}\n", "task.yaml: health.timeout_s: got -1; expected a positive number of seconds"),
        ("id: notes\ntitle: x\nisolation: run\n", "task.yaml: isolation: got 'run'; expected task (one service per run) or item (a fresh one per item)"),
        ("id: notes\ntitle: x\nmemory: 1.5\n", "task.yaml: memory: got 1.5; expected a memory size in docker syntax, e.g. 512m or 1g"),
        ("id: other\ntitle: x\n", "task.yaml: id: 'other' differs from the folder name 'notes'"),
    ],
)
def test_task_yaml_defects_name_field_value_and_expectation(task_dir: Path, text: str, message: str) -> None:
    (task_dir / "task.yaml").write_text(text)
    with pytest.raises(BackendBenchFormatError) as info:
        load_task(task_dir, task_dir.parent / "oracles")
    assert str(info.value) == f"{task_dir}/{message}"


def test_a_valid_task_keeps_its_extra_keys_and_defaults(task_dir: Path) -> None:
    (task_dir / "task.yaml").write_text("id: notes\ntitle: Notes\nrequirements: {R1: a}\ne2edev: {sleep_policy: real}\nmemory: 1g\n")
    task = load_task(task_dir, task_dir.parent / "oracles")
    assert (task.port, task.kind, task.memory, task.isolation, task.extra) == (8000, "backend", "1g", "task", {"e2edev": {"sleep_policy": "real"}})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("run: [python, app.py]\n", "run: got ['python', 'app.py']; expected a string"),
        ("generation: {seconds: -1}\n", "generation.seconds: got -1; expected a non-negative number"),
        ("generation: 3\n", "generation: got 3; expected a mapping of model, tokens_in, tokens_out, cost_usd, seconds"),
        ("foo: 1\n", "unknown keys ['foo']; allowed: task, run, generation"),
    ],
)
def test_candidate_yaml_defects(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "candidate.yaml").write_text(text)
    with pytest.raises(BackendBenchFormatError) as info:
        load_candidate_yaml(tmp_path)
    assert str(info.value) == f"{tmp_path}/candidate.yaml: {message}"


def test_mock_yaml_needs_a_port_and_a_run_command(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "mock.yaml").write_text("run: python mock.py\n")
    with pytest.raises(BackendBenchFormatError, match=r"mock.yaml: port: missing; expected the port the mock listens on$"):
        load_mock(tmp_path, "m")
    (tmp_path / "m" / "mock.yaml").write_text("port: 9000\nrun: python mock.py\n")
    assert load_mock(tmp_path, "m").port == 9000
