"""Versioned tasks: a per-task content hash of what defines its verdicts, refused merges and
warnings when two runs judged different versions."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from pytest_backendbench.errors import HarnessError
from pytest_backendbench.metrics import MetricOptions
from pytest_backendbench.report.compare import version_warnings
from pytest_backendbench.report.json_report import build_report, write_report
from pytest_backendbench.report.merge import merge_reports
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.versions import harness_version, task_versions
from pytest_backendbench.tasks import TaskCatalog

DATA = Path(__file__).parents[1] / "data" / "bench"


@pytest.fixture
def two_tasks(tmp_path: Path) -> TaskCatalog:
    """The notes task twice (notes, notes2), so one can change while the other stays."""
    shutil.copytree(DATA, tmp_path, dirs_exist_ok=True)
    for where in ("benchmarks", "oracles"):
        shutil.copytree(tmp_path / where / "notes", tmp_path / where / "notes2")
    task_yaml = tmp_path / "benchmarks" / "notes2" / "task.yaml"
    task_yaml.write_text(task_yaml.read_text().replace("id: notes", "id: notes2"))
    return TaskCatalog(tmp_path)


def test_changing_one_oracle_file_changes_that_tasks_hash_only(two_tasks: TaskCatalog) -> None:
    before = task_versions(two_tasks, ["notes", "notes2"])
    assert len(set(before.values())) == 2 and all(len(v) == 64 for v in before.values())
    oracle = two_tasks.oracles_dir / "notes2" / "test_notes.py"
    oracle.write_text(oracle.read_text() + "\n# one more line\n")
    after = task_versions(two_tasks, ["notes", "notes2"])
    assert after["notes"] == before["notes"] and after["notes2"] != before["notes2"]


def test_references_review_notes_and_mutants_do_not_change_the_version(two_tasks: TaskCatalog) -> None:
    before = task_versions(two_tasks, ["notes"])
    oracle = two_tasks.oracles_dir / "notes"
    (oracle / "reference" / "app.py").write_text("# rewritten reference\n")
    (oracle / "REVIEW.md").write_text("reviewed\n")
    (oracle / "mutants.yaml").write_text("mutants: []\n")
    assert task_versions(two_tasks, ["notes"]) == before
    (two_tasks.benchmarks_dir / "notes" / "spec.md").write_text("a spec that gained a sentence\n")
    assert task_versions(two_tasks, ["notes"]) != before


def _shard(tmp_path: Path, name: str, task: str, version: str) -> Path:
    item = ItemResult(nodeid=f"{task}::a", task=task, candidate=task, kind="http", outcome="passed", requirements=["R1"])
    result = TaskResult(task=task, candidate=task, finished=True, items=[item])
    manifest = {
        "harness_version": harness_version(), "python": "3", "platform": "p", "runtime": "process", "session_id": name,
        "started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:00+00:00", "options": {}, "candidates": {},
        "interrupted": False, "task_versions": {"notes": version, task: version},
    }
    folder = tmp_path / name
    write_report(folder, build_report([result], manifest, MetricOptions()))
    return folder


def test_merge_refuses_shards_that_judged_a_task_on_different_versions(tmp_path: Path) -> None:
    one = _shard(tmp_path, "shard-1", "notes", "a" * 64)
    two = _shard(tmp_path, "shard-2", "notes2", "b" * 64)
    with pytest.raises(HarnessError, match=r"task notes: .*shard-2 judged version bbbbbbbbbbbb, .*shard-1 judged aaaaaaaaaaaa"):
        merge_reports([one, two])
    same = _shard(tmp_path, "shard-3", "notes2", "a" * 64)
    merged = merge_reports([one, same])
    assert merged["manifest"]["task_versions"] == {"notes": "a" * 64, "notes2": "a" * 64}


def test_compare_warns_per_task_judged_on_different_versions(tmp_path: Path) -> None:
    a = json.loads((_shard(tmp_path, "a", "notes", "a" * 64) / "report.json").read_text())
    b = copy.deepcopy(a)
    assert version_warnings(a, b, "A", "B") == []
    b["manifest"]["task_versions"]["notes"] = "c" * 64
    assert version_warnings(a, b, "A", "B") == [
        "task notes: judged on different task versions (A aaaaaaaaaaaa, B cccccccccccc); its figures do not compare"
    ]
    del b["manifest"]["task_versions"]
    assert version_warnings(a, b, "A", "B") == ["B recorded no task versions: the runs may have judged different oracles (1 tasks)"]
