"""Gherkin oracles through the whole plugin: --candidate, a static frontend candidate, the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import TODO_APP, TODO_BENCH

EXPECTED = {
    "passed": {
        "[Normal] A typed todo is appended and counted",
        "[Normal] after_scenario in the steps module runs",
        "[Normal] The late item arrives",
        "[Normal] Adding 0 todos counts 1 item -- @1.1",
        "[Normal] Adding 2 todos counts 3 items -- @1.2",
        "[Normal] The page opens through a file path placeholder",
        "[Normal] The outcome is a counted todo",
        "[Error] The outcome is the error toast",
        "[Normal] Sleeps are capped by the sleep policy",
        "[Normal] A first scenario stores a todo",
        "[Normal] The next scenario starts from empty storage",
    },
    "failed": {
        "[Error] The count is checked against a wrong expectation",
        "[Normal] A todo can be archived",
        "[Error] An element that never appears",
    },
    "error": {
        "[Normal] A step nobody implemented",
        "[Normal] Two definitions of one step",
        "[Normal] The steps module needs a package nobody installed",
    },
}


@pytest.mark.browser
@pytest.mark.slow
def test_a_static_frontend_candidate_is_judged_by_its_scenarios(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    shutil.copytree(TODO_BENCH, pytester.path, dirs_exist_ok=True)
    candidate = pytester.path / "candidate"
    shutil.copytree(TODO_APP, candidate)  # plain files: index.html, js, css; the harness serves them

    result = pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3 + len(EXPECTED["passed"]), failed=len(EXPECTED["failed"]), errors=len(EXPECTED["error"]))

    report = json.loads((pytester.path / "out" / "report.json").read_text())
    items = [i for t in report["tasks"] for i in t["items"] if i["kind"] == "bdd"]
    by_outcome: dict[str, set[str]] = {}
    for item in items:
        by_outcome.setdefault(item["outcome"], set()).add(item["nodeid"].split("::")[-1])
    assert by_outcome == EXPECTED
    archive = next(i for i in items if i["nodeid"].endswith("A todo can be archived"))
    assert (archive["requirements"], archive["category"], archive["tier"], archive["weight"]) == (["R5"], "workflow", "r1", 2.0)
    assert Path(archive["artifacts"]["screenshot"]).read_bytes().startswith(b"\x89PNG")
    wrong_count = next(i for i in items if i["nodeid"].endswith("The count is checked against a wrong expectation"))
    assert wrong_count["message"].endswith("(line 6): expected the count '3 items', got '1 item'")  # why, not only where
    undefined = next(i for i in items if i["nodeid"].endswith("A step nobody implemented"))
    assert "no step definition matches" in undefined["message"]
    assert report["tasks"][0]["build_cached"] is True and report["tasks"][0]["ready_seconds"] < 1
