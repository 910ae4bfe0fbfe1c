"""The two app.build mutants of tests/appbuild/mutants.yaml against the event-registration reference.

A real run each (process runtime, PostgreSQL, Chromium, Lighthouse) of only the candidate's phase
items and app checks, so they run with ``--all-mutants`` only (as the task mutants that CI leaves
to ``backendbench validate``): the broken Create handler fails AB-06, the 5 MB script lowers AB-07
(from the reference's 0.97-1.0 to about 0.5: WARN).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
REFERENCE = REPO / "oracles" / "event-registration" / "reference"
MUTANTS = yaml.safe_load((Path(__file__).parent / "mutants.yaml").read_text(encoding="utf-8"))["mutants"]
MEASURE = {"AB-06": "sweep", "AB-07": "lighthouse"}

pytestmark = [pytest.mark.browser, pytest.mark.postgres, pytest.mark.slow]


def materialize(mutant: dict[str, Any], dest: Path) -> Path:
    """The reference with the mutant's edits (each find must match once)."""
    shutil.copytree(REFERENCE, dest)
    for edit in mutant["edits"]:
        target = dest / edit["file"]
        text = target.read_text(encoding="utf-8")
        assert text.count(edit["find"]) == 1, f"{mutant['name']}: {edit['file']}: the find text must match once"
        target.write_text(text.replace(edit["find"], edit["replace"]), encoding="utf-8")
    return dest


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_an_app_build_mutant_fails_its_check(mutant: dict[str, Any], tmp_path: Path, request: pytest.FixtureRequest, lighthouse: str) -> None:
    if not request.config.getoption("all_mutants"):
        pytest.skip("a full run per mutant: judged with --all-mutants")
    candidate = materialize(mutant, tmp_path / "candidate")
    check = mutant["expect_check"]
    command = [
        sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--candidate={candidate}", "--bench-task=event-registration",
        "--bench-runtime=process", f"--bench-report-dir={tmp_path / 'out'}", f"--bench-app-checks={MEASURE[check]}", f"--bench-lighthouse={lighthouse}",
        "-k", "build or boot or smoke or sweep or performance",
    ]
    run = subprocess.run(command, check=False, cwd=REPO, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True, timeout=900)
    failing = mutant["expect_grade"] == "FAIL"
    assert run.returncode == (1 if failing else 0), run.stdout[-3000:]  # 1: an item failed; never an error of the session
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    (item,) = [i for i in report["tasks"][0]["items"] if i["kind"] == "app_check"]
    assert item["app_check"]["check"] == check
    assert item["app_check"]["grade"] == mutant["expect_grade"], (item["message"], item["app_check"].get("details"))
    assert item["outcome"] == ("failed" if failing else "passed")  # a FAIL is the candidate's failure, never an error of ours
    if "expect_score_below" in mutant:
        assert item["app_check"]["score"] < mutant["expect_score_below"]  # the reference scores 0.97-1.0
