"""A task with its own Dockerfile (imported BaxBench) exported to Harbor: the environment, the
verifier's entry point, and Harbor's container standing in for the candidate's.

Harbor's own ``harbor run`` on an exported BaxBench task (reference 1.0, a mutant below) is
bench/harbor_roundtrip.py --bench-root <imported bench>.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
import yaml
from docker.errors import NotFound

from pytest_backendbench.errors import TaskFormatError
from pytest_backendbench.formats.harbor_entry import restore
from pytest_backendbench.formats.harbor_export import export_harbor_task
from pytest_backendbench.formats.harbor_local import LOCAL_ID, LocalCandidate
from pytest_backendbench.formats.harbor_own_image import own_image_of
from pytest_backendbench.formats.harbor_verify import run_entry_point
from pytest_backendbench.host.processes import free_port
from pytest_backendbench.importers.baxbench import import_baxbench
from pytest_backendbench.tasks import TaskCatalog

MINI = Path(__file__).parents[1] / "importers" / "data" / "baxbench-mini"
VAULT = "baxbench-vault-python-flask"


def test_an_imported_baxbench_task_exports_with_its_dockerfile_as_the_environment(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    import_baxbench(MINI, bench)
    task = export_harbor_task(bench, VAULT, tmp_path / "out", solution=MINI / "candidates" / "vault-good")
    dockerfile = (task / "environment" / "Dockerfile").read_text()
    assert "FROM backendbench/python:3.11\n" in dockerfile and "RUN python3 -m pip install -r requirements.txt" in dockerfile
    assert "ENTRYPOINT" not in dockerfile and "COPY / /app/" not in dockerfile  # the agent writes /app; the verifier starts it
    assert dockerfile.endswith("COPY workspace/ /app/\nWORKDIR /app\n") and "/opt/backendbench/bin/pip install" in dockerfile
    assert (task / "environment" / "requirements.txt").is_file()  # the build file the Dockerfile copies
    assert "--entry 'python3 app.py' --entry-port 5000" in (task / "tests" / "test.sh").read_text()
    copied = task / "tests" / "bench"
    data = yaml.safe_load((copied / "benchmarks" / VAULT / "task.yaml").read_text())
    assert "dockerfile" not in data and "build_files" not in data and data["isolation"] == "item"
    assert "harbor_local import container" in (copied / "oracles" / VAULT / "conftest.py").read_text()
    assert (copied / "oracles" / "_baxbench" / "exploits.py").is_file()  # the test code the oracle's items call
    assert TaskCatalog(copied).load(VAULT).dockerfile is None  # the process runtime runs it


@pytest.mark.parametrize(("dockerfile", "why"), [
    ("FROM x\nWORKDIR /srv\nCOPY . .\nENTRYPOINT python3 app.py\n", "WORKDIR is /srv: the candidate must live in /app"),
    ("FROM x\nWORKDIR /app\nENTRYPOINT [python3\n", r"is neither JSON \(exec form\) nor a command line"),
])
def test_a_dockerfile_the_verifier_cannot_start_is_refused(tmp_path: Path, dockerfile: str, why: str) -> None:
    bench = tmp_path / "bench"
    import_baxbench(MINI, bench)
    (bench / "benchmarks" / VAULT / "Dockerfile").write_text(dockerfile)
    with pytest.raises(TaskFormatError, match=why):
        own_image_of(TaskCatalog(bench).load(VAULT), "/opt/venv")


def test_the_exec_form_entry_point_and_continued_lines(tmp_path: Path) -> None:
    bench = tmp_path / "bench"
    import_baxbench(MINI, bench)
    (bench / "benchmarks" / VAULT / "Dockerfile").write_text('FROM x\nRUN a \\\n && b\nWORKDIR /app/\nCOPY --chown=1 / /app/\nCMD ["python3", "app.py"]\n')
    image = own_image_of(TaskCatalog(bench).load(VAULT), "/opt/venv")
    assert image.entry == "python3 app.py" and "RUN a   && b\n" in image.dockerfile and "--chown" not in image.dockerfile


def test_the_container_fixture_is_this_container(tmp_path: Path) -> None:
    (tmp_path / "db.sqlite3").write_bytes(b"rows")
    candidate = LocalCandidate(tmp_path, "http://127.0.0.1:5123")
    assert (candidate.id, candidate.localhost_port) == (LOCAL_ID, 5123)
    container = candidate.engine.containers.get(candidate.id)
    stream, _ = container.get_archive(str(tmp_path / "db.sqlite3"))
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
        assert tar.extractfile("db.sqlite3").read() == b"rows"  # type: ignore[union-attr]
    with pytest.raises(NotFound):
        container.get_archive("/no/such/danger.txt")
    with pytest.raises(NotFound):
        candidate.engine.containers.get("another")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("placed.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    assert container.put_archive(str(tmp_path), buffer.getvalue()) and (tmp_path / "placed.txt").read_text() == "hi"
    assert container.exec_run("ls; exit 3") == (3, b"db.sqlite3\nplaced.txt\n")
    assert container.stats(stream=False)["memory_stats"]["usage"] == 0  # no process runs in tmp_path


def test_every_start_meets_the_candidate_folder_as_the_verifier_found_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = tmp_path / "app"
    app.mkdir()
    (app / "app.py").write_text("print('hi')\n")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    run_entry_point(app, "python3 app.py", 5000)
    run = yaml.safe_load((app / "candidate.yaml").read_text())["run"]
    config = json.loads(Path(run.split("--config ")[1]).read_text())
    assert config["entry"] == "python3 app.py" and config["port"] == 5000 and "pytest_backendbench.formats.harbor_entry" in run
    (app / "db.sqlite3").write_text("the previous item's rows")
    (app / "app.py").write_text("changed\n")
    restore(app, Path(config["snapshot"]))
    assert sorted(p.name for p in app.iterdir()) == ["app.py", "candidate.yaml"] and (app / "app.py").read_text() == "print('hi')\n"


def test_the_launcher_forwards_the_runtime_port_to_the_entry_point(tmp_path: Path) -> None:
    fixed, given = free_port(), free_port()
    snapshot, app = tmp_path / "snapshot", tmp_path / "app"
    snapshot.mkdir()
    app.mkdir()
    (snapshot / "app.py").write_text(
        f"import socket\ns = socket.create_server(('127.0.0.1', {fixed}))\nc, _ = s.accept()\nc.sendall(c.recv(5).upper())\nc.close()\n"
    )
    config = tmp_path / "entry.json"
    config.write_text(json.dumps({"entry": "python3 app.py", "port": fixed, "workdir": str(app), "snapshot": str(snapshot)}))
    launcher = subprocess.Popen([sys.executable, "-m", "pytest_backendbench.formats.harbor_entry", "--config", str(config)], env={**os.environ, "PORT": str(given)})
    reply = b""
    try:
        deadline = time.monotonic() + 20
        while not reply and time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", given), timeout=5) as conn:
                    conn.sendall(b"hello")
                    reply = conn.recv(5)
            except OSError:
                time.sleep(0.1)
        assert reply == b"HELLO" and launcher.wait(timeout=20) == 0  # the launcher ends with its entry point
    finally:
        launcher.kill()


def test_a_local_exec_keeps_its_timeout_like_the_candidates_container(tmp_path: Path) -> None:
    from pytest_backendbench.formats.harbor_local import LocalCandidate
    from pytest_backendbench.runtime.container_access import ExecTimeout

    candidate = LocalCandidate(tmp_path, "http://127.0.0.1:5000")
    assert candidate.exec("pwd").output.decode().strip() == str(tmp_path)
    with pytest.raises(ExecTimeout, match="did not finish within 0.5 s"):
        candidate.exec("sleep 5", timeout=0.5)
