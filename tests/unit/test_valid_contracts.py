"""A contract found valid once is not validated again by the next process; an edit is."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.tasks import TaskCatalog, ValidContracts, load_contract

BUNDLED = Path(__file__).resolve().parents[2]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A bench root holding a copy of one bundled task (its openapi.yaml is edited by tests)."""
    shutil.copytree(BUNDLED / "benchmarks" / "url-shortener", tmp_path / "benchmarks" / "url-shortener")
    return tmp_path


def count_validations(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Make openapi_spec_validator.validate record each call (and still validate)."""
    import openapi_spec_validator

    calls: list[object] = []
    real = openapi_spec_validator.validate

    def recording(spec: object, *args: object, **kwargs: object) -> None:
        calls.append(spec)
        real(spec, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(openapi_spec_validator, "validate", recording)
    return calls


def test_a_valid_contract_is_validated_once_across_loads(bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_validations(monkeypatch)
    task = TaskCatalog(bench).load("url-shortener")
    memo = ValidContracts(tmp_path / "memo")
    first = load_contract(task, memo)
    second = load_contract(task, ValidContracts(tmp_path / "memo"))  # another process: a new memo on the same folder
    assert first == second and first is not None and "paths" in first
    assert len(calls) == 1
    assert [p.name for p in (tmp_path / "memo").iterdir()] == [memo.digest(task.openapi_path.read_text(encoding="utf-8"))]  # type: ignore[union-attr]


def test_an_edited_contract_is_validated_again_and_an_invalid_edit_refused(bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_validations(monkeypatch)
    task = TaskCatalog(bench).load("url-shortener")
    memo = ValidContracts(tmp_path / "memo")
    load_contract(task, memo)
    path = task.openapi_path
    assert path is not None
    path.write_text(path.read_text().replace("openapi: 3.1.0", "openapi: 3.1.0\nwebhooks: 7", 1))
    with pytest.raises(TaskFormatError, match="invalid OpenAPI document"):
        load_contract(task, memo)
    assert len(calls) == 2
    assert len(list((tmp_path / "memo").iterdir())) == 1  # the refused document is not remembered


def test_without_a_memo_or_with_an_unwritable_folder_every_load_validates(bench: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_validations(monkeypatch)
    task = TaskCatalog(bench).load("url-shortener")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    unwritable = ValidContracts(blocker / "memo")
    assert load_contract(task) == load_contract(task, unwritable)
    load_contract(task, unwritable)
    assert len(calls) == 3
