"""``backendbench export harbor``: the Harbor task layout, and the verifier's rewards.

Harbor's own ``harbor run`` on exported tasks (reference 1.0, a mutant below) is
bench/harbor_roundtrip.py: Harbor needs Python >= 3.12 and a built image, minutes per task.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_backendbench.cli.main import main as backendbench
from pytest_backendbench.formats.harbor_verify import NoVerdictError, rewards_of
from pytest_backendbench.formats.harbor_verify import main as verify

REPO = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")  # Python >= 3.11


def test_a_bundled_postgres_task_exports_as_a_harbor_task(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert backendbench(["export", "harbor", "library-loans", f"--bench-root={REPO}", f"--out={tmp_path}", "--base-image=debian-with-python"]) == 0
    task = tmp_path / "library-loans"
    assert capsys.readouterr().out == f"exported library-loans as a Harbor task: {task}\n"
    config = tomllib.loads((task / "task.toml").read_text())
    assert config["task"]["name"] == "backendbench/library-loans" and config["metadata"]["database"] == "postgres"
    assert (task / "instruction.md").read_text().startswith("Build the backend service `library-loans`")
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert dockerfile.startswith("FROM debian-with-python\n") and "apt-get install -y --no-install-recommends postgresql" in dockerfile
    assert sorted(p.name for p in (task / "environment" / "workspace").iterdir()) == ["CANDIDATE_FORMAT.md", "REQUIREMENTS.md", "openapi.yaml", "spec.md"]
    assert (task / "environment" / "backendbench-src" / "pytest_backendbench" / "formats" / "harbor_verify.py").is_file()
    assert (task / "solution" / "files" / "candidate.yaml").is_file() and os.access(task / "solution" / "solve.sh", os.X_OK)
    assert "pytest_backendbench.formats.harbor_verify --bench-root /tests/bench --task library-loans" in (task / "tests" / "test.sh").read_text()
    oracle = task / "tests" / "bench" / "oracles" / "library-loans"
    assert oracle.is_dir() and not (oracle / "reference").exists()  # the verifier never needs the answer
    assert sorted(p.name for p in (task / "tests" / "bench" / "mocks").iterdir()) == ["mailer"]


def test_frontend_tasks_are_refused_naming_the_task_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench"
    (bench / "benchmarks" / "page").mkdir(parents=True)
    (bench / "oracles" / "page").mkdir(parents=True)
    (bench / "benchmarks" / "page" / "task.yaml").write_text("id: page\ntitle: A page\nkind: frontend\nport: 8000\n")
    (bench / "benchmarks" / "page" / "spec.md").write_text("# A page\n")
    assert backendbench(["export", "harbor", "page", f"--bench-root={bench}", f"--out={tmp_path / 'out'}"]) == 2
    error = capsys.readouterr().err
    assert "page/task.yaml" in error and "kind 'frontend': only backend tasks are exported to Harbor" in error


def test_a_dockerfile_that_starts_no_candidate_is_refused_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench"
    (bench / "benchmarks" / "calc").mkdir(parents=True)
    (bench / "oracles" / "calc").mkdir(parents=True)
    (bench / "benchmarks" / "calc" / "task.yaml").write_text("id: calc\ntitle: Calc\nkind: backend\nport: 5000\ndockerfile: Dockerfile\n")
    for name in ("spec.md", "openapi.yaml", "Dockerfile"):
        (bench / "benchmarks" / "calc" / name).write_text("openapi: 3.0.3\ninfo: {title: c, version: '1'}\npaths: {}\n" if name == "openapi.yaml" else "FROM x\n")
    assert backendbench(["export", "harbor", "calc", f"--bench-root={bench}", f"--out={tmp_path / 'out'}"]) == 2
    error = capsys.readouterr().err
    assert "calc/Dockerfile" in error and "no ENTRYPOINT or CMD: the verifier would not know how to start the candidate" in error


def test_rewards_are_the_success_then_named_figures() -> None:
    summary = {"sr": 0.0, "test_acc": 0.97, "req_acc": 0.9, "items": 170, "passed": 165, "failed": 5, "errors": 0,
               "failures_by_category": {"security": 2}, "fe_acc": None}
    assert rewards_of(summary) == {"reward": 0.0, "test_acc": 0.97, "req_acc": 0.9, "items": 170, "passed": 165, "failed": 5, "errors": 0,
                                   "security_failed": 2}
    with pytest.raises(NoVerdictError, match="no determined success rate"):
        rewards_of({"sr": None})


def test_a_verifier_run_that_writes_no_report_writes_no_reward(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = verify(["--bench-root", str(tmp_path), "--task", "absent", "--candidate", str(tmp_path), "--logs", str(tmp_path / "logs")])
    assert code == 2 and not (tmp_path / "logs" / "reward.json").exists()
    assert "wrote no report" in capsys.readouterr().err
