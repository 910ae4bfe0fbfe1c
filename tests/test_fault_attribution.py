"""Harness faults end as errors, never as the candidate's failure (issue 15, "Fault attribution")."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")

PLANT_IN_CONTRACT = '''
import pytest_backendbench.http.contract as contract

namespace = {}
exec(compile("def violations(self, response):\\n    assert False, 'planted in the harness'\\n", contract.__file__, "exec"), namespace)
contract.Contract.violations = namespace["violations"]
'''


def test_a_bare_assert_planted_in_the_contract_check_errors_every_http_item(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    pytester.makeconftest(PLANT_IN_CONTRACT)
    # a subprocess: the planted fault must not outlive this test in the worker's modules
    result = pytester.runpytest_subprocess(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(passed=3, errors=4)
    items = [i for t in read_report(pytester.path / "out")["tasks"] for i in t["items"] if i["kind"] == "http"]
    assert {i["outcome"] for i in items} == {"error"}
    result.stdout.fnmatch_lines(["*AssertionError: planted in the harness*"])  # the traceback is kept


def test_a_root_with_candidates_for_some_tasks_only_scores_the_present_ones(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    """The missing task's items fail; the next present task's items run normally (they used to
    end with pytest's "previous item was not torn down properly")."""
    for task in ("notes2", "notes3"):
        for folder in ("benchmarks", "oracles"):
            pytester.run("cp", "-r", str(bench / folder / "notes"), str(bench / folder / task))
        task_yaml = bench / "benchmarks" / task / "task.yaml"
        task_yaml.write_text(task_yaml.read_text().replace("id: notes", f"id: {task}"))
    root = bench / "runs"
    make_candidate("notes", task="notes", where=root)
    make_candidate("notes3", task="notes3", where=root)
    result = pytester.runpytest(f"--candidate={root}", "--bench-report-dir=out", *RUN)
    assert "not torn down" not in result.stdout.str()
    result.assert_outcomes(passed=14, failed=7)
    report = read_report(pytester.path / "out")
    outcomes = {t["task"]: {i["outcome"] for i in t["items"]} for t in report["tasks"]}
    assert outcomes == {"notes": {"passed"}, "notes2": {"failed"}, "notes3": {"passed"}}
