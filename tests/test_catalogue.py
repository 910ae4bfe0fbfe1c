"""The catalogue page counts what pytest collects."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_backendbench.cli.catalogue import build_catalogue

from .conftest import DATA


def test_catalogue_counts_collected_items_per_tier_and_category(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:benchmark")  # the in-process collection, like pytester runs (tests/conftest.py)
    shutil.copytree(DATA / "bench", tmp_path / "bench")
    broken = tmp_path / "bench" / "benchmarks" / "broken"
    broken.mkdir()
    (broken / "task.yaml").write_text("id: broken\n")
    page, entries = build_catalogue(tmp_path / "bench")
    assert entries[0]["items_by_tier"] == {"base": 3, "r1": 1}
    assert entries[0]["items_by_category"] == {"api_surface": 1, "authorization": 1, "validation": 1, "state": 1}
    assert "| `notes` | Notes (harness test task) | backend | testing | 4 | 4 | base: 3, r1: 1 | - | none |" in page
    assert "| `notes` | 1 | 1 | 1 | 1 | 0 | 0 | 0 | http: 4 |" in page
    assert "- `broken`: " in page and "title: missing" in page
