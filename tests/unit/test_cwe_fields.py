"""Security items declare one or several CWEs and record what they found (markers.py, results.py)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_backendbench.markers import item_cwe, item_cwes, marker_problem
from pytest_backendbench.report.json_report import validate_report
from pytest_backendbench.results import FOUND_CWES_PROPERTY, INCONCLUSIVE_PROPERTY, ItemResult, PhaseRecord, security_facts

from ..conftest import read_report


class Marked:
    """The two marker readers of an item, over real ``pytest.mark`` marks."""

    def __init__(self, *marks: pytest.MarkDecorator) -> None:
        self.marks = [m.mark for m in marks]

    def get_closest_marker(self, name: str) -> Any:
        return next((m for m in self.marks if m.name == name), None)

    def iter_markers(self, name: str) -> Any:
        return (m for m in self.marks if m.name == name)


SECURITY = (pytest.mark.requirement("R1"), pytest.mark.category("security"))


def test_cwe_takes_one_or_several_numbers() -> None:
    several = Marked(*SECURITY, pytest.mark.cwe(89, 79))
    assert marker_problem(several, {}) is None  # type: ignore[arg-type]
    assert (item_cwes(several), item_cwe(several)) == ([89, 79], 89)  # type: ignore[arg-type]
    assert item_cwes(Marked(*SECURITY)) == [] and item_cwe(Marked(*SECURITY)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("mark", [pytest.mark.cwe(), pytest.mark.cwe(89, "79"), pytest.mark.cwe(89, 0), pytest.mark.cwe(True), pytest.mark.cwe(89, id=79)])
def test_malformed_cwe_markers_are_refused(mark: pytest.MarkDecorator) -> None:
    problem = marker_problem(Marked(*SECURITY, mark), {})  # type: ignore[arg-type]
    assert problem is not None and "one or several positive CWE numbers" in problem


def test_security_facts_read_the_item_properties() -> None:
    assert security_facts([]) == ([], False)
    assert security_facts([("other", 1), (FOUND_CWES_PROPERTY, [89, 79, 89]), (INCONCLUSIVE_PROPERTY, True)]) == ([79, 89], True)
    assert security_facts([(FOUND_CWES_PROPERTY, "89")]) == ([], False)  # not a list: ignored, never guessed


def test_the_new_fields_travel_as_plain_dicts() -> None:
    result = ItemResult("n", "t", "c", "http", "failed", cwe=89, cwes=[89, 79], found_cwes=[79], inconclusive=False)
    record = PhaseRecord(result)
    assert PhaseRecord.from_dict(record.to_dict()) == record
    assert ItemResult.from_dict({"nodeid": "n", "task": "t", "candidate": "c", "kind": "http", "outcome": "passed"}).cwes == []


ORACLE = '''
import pytest
import yaml

def record(request, found, inconclusive=False):
    request.node.user_properties.append(("bench_found_cwes", found))
    request.node.user_properties.append(("bench_inconclusive", inconclusive))

@pytest.mark.requirement("R1")
@pytest.mark.category("security")
@pytest.mark.cwe(89, 79)
def test_found(http, request):
    record(request, [79])
    assert False, "CWE-79 found"

@pytest.mark.requirement("R1")
@pytest.mark.category("security")
@pytest.mark.cwe(22)
def test_undecided(http, request):
    record(request, [], inconclusive=True)
'''


@pytest.mark.parametrize("workers", [[], ["-n", "2", "--dist", "loadgroup"]], ids=["one-process", "xdist"])
def test_found_cwes_and_inconclusive_reach_the_report(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], workers: list[str]) -> None:
    (pytester.path / "oracles" / "notes" / "test_sec.py").write_text(ORACLE)
    good = make_candidate("good")
    pytester.runpytest_subprocess(f"--candidate={good}", "--bench-report-dir=out", "--bench-runtime=process", "-p", "no:cacheprovider", *workers)
    report = read_report(pytester.path / "out")
    validate_report(report)
    items = {i["nodeid"].split("::")[-1].split("[")[0]: i for t in report["tasks"] for i in t["items"]}
    found, undecided = items["test_found"], items["test_undecided"]
    assert (found["outcome"], found["cwe"], found["cwes"], found["found_cwes"], found["inconclusive"]) == ("failed", 89, [89, 79], [79], False)
    assert (undecided["outcome"], undecided["cwes"], undecided["found_cwes"], undecided["inconclusive"]) == ("passed", [22], [], True)


def test_mutants_may_name_the_cwes_they_plant(tmp_path: Path) -> None:
    from pytest_backendbench.cli.validate import load_mutants
    from pytest_backendbench.errors import TaskFormatError
    from pytest_backendbench.tasks import TaskCatalog

    shutil.copytree(Path(__file__).parent.parent / "data" / "bench", tmp_path, dirs_exist_ok=True)
    mutants = tmp_path / "oracles" / "notes" / "mutants.yaml"
    edit = {"file": "app.py", "find": "x", "replace": "y"}
    mutants.write_text(yaml.safe_dump({"mutants": [{"name": "plain", "expect_category": "security", "expected_cwes": [522, 89], "edits": [edit]}]}))
    task = TaskCatalog(tmp_path).load("notes")
    assert [m.expected_cwes for m in load_mutants(task)] == [(522, 89)]
    mutants.write_text(yaml.safe_dump({"mutants": [{"name": "plain", "expect_category": "security", "expected_cwes": ["CWE-522"], "edits": [edit]}]}))
    with pytest.raises(TaskFormatError, match="expected a list of CWE numbers"):
        load_mutants(task)
