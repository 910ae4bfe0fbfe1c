"""Which task Dockerfiles share one environment image (runtime/code_layer.py), and the code archive."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from pytest_backendbench.runtime.code_layer import code_archive, environment_tag, split_code_copy

BAXBENCH_STYLE = """# setup base
FROM backendbench/python:3.11
RUN apt-get update && apt-get install -y --no-install-recommends \\
    sqlite3 procps
RUN mkdir -p /app
WORKDIR /app
COPY requirements.txt requirements.txt
RUN python3 -m pip install -r requirements.txt
ENV APP_SECRET=supers3cret
COPY / /app/
ENTRYPOINT python3 app.py
"""


def test_a_dockerfile_ending_in_the_code_copy_splits_off_its_environment() -> None:
    split = split_code_copy(BAXBENCH_STYLE, ("requirements.txt",))
    assert split is not None and split.destination == "/app"
    assert "COPY / /app/" not in split.environment_dockerfile
    assert split.environment_dockerfile == BAXBENCH_STYLE.replace("COPY / /app/\n", ""), "every other line, continuations included, is kept"


def test_a_relative_destination_follows_workdir() -> None:
    split = split_code_copy("FROM x\nWORKDIR /srv\nWORKDIR app\nCOPY . .\nCMD run\n", ())
    assert split is not None and split.destination == "/srv/app"


@pytest.mark.parametrize(
    "dockerfile",
    [
        "FROM x\nCOPY . /app\nRUN npm install\nCMD node app.js\n",  # a build step uses the code
        "FROM x\nCOPY app.py /app/app.py\nRUN python -c 1\nCOPY . /app\n",  # an earlier step copies code
        "FROM x\nCOPY --chown=node . /app\n",  # ownership COPY sets, not reproduced
        "FROM x\nADD . /app\n",
        "FROM x\nCOPY src /app\n",  # not the whole context
        "FROM x\nCMD run\n",
    ],
)
def test_other_dockerfiles_are_built_per_candidate(dockerfile: str) -> None:
    assert split_code_copy(dockerfile, ("requirements.txt",)) is None


def test_the_environment_tag_changes_with_the_dockerfile_the_build_files_and_the_base() -> None:
    split = split_code_copy(BAXBENCH_STYLE, ("requirements.txt",))
    assert split is not None
    tag = environment_tag("backendbench", split, {"requirements.txt": b"flask\n"}, None)
    assert tag.startswith("backendbench/environment:")
    assert tag == environment_tag("backendbench", split, {"requirements.txt": b"flask\n"}, None)
    assert tag != environment_tag("backendbench", split, {"requirements.txt": b"flask==3\n"}, None)
    assert tag != environment_tag("backendbench", split, {"requirements.txt": b"flask\n"}, "other/base")


def test_the_archive_holds_the_context_under_the_destination_owned_by_root(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "app.py").write_text("print(1)\n")
    (tmp_path / "pkg" / "run.sh").write_text("#!/bin/sh\n")
    (tmp_path / "pkg" / "run.sh").chmod(0o755)
    with tarfile.open(fileobj=io.BytesIO(code_archive(tmp_path, "/app")), mode="r") as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert sorted(members) == ["app/app.py", "app/pkg", "app/pkg/run.sh"]
    assert {(m.uid, m.gid, m.uname) for m in members.values()} == {(0, 0, "root")}
    assert members["app/pkg/run.sh"].mode & 0o777 == 0o755
