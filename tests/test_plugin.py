"""Plugin behaviour end to end: real candidate processes, pytester runs, the written report."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.report.json_report import validate_report

from .conftest import read_report

RUN = ("--bench-runtime=process", "-p", "no:cacheprovider")


def outcomes_by_name(report: dict) -> dict[str, str]:
    return {i["nodeid"].split("::")[-1]: i["outcome"] for t in report["tasks"] for i in t["items"]}


def test_reference_passes_every_item(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    good = make_candidate("good")
    result = pytester.runpytest(f"--candidate={good}", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*backendbench summary*", "notes *ok*4*4*100.0%*", "SR * 100.0%", "Final SR * 100.0%"])
    report = read_report(pytester.path / "out")
    validate_report(report)
    assert report["summary"]["sr"] == 1.0
    assert report["summary"]["contract_conformance"] == 1.0
    task = report["tasks"][0]
    assert task["finished"] and task["phase_failed"] is None and task["ready_seconds"] > 0
    assert [i["kind"] for i in task["items"]] == ["build", "boot", "smoke", "http", "http", "http", "http"]
    assert report["manifest"]["candidates"]["notes"]["content_hash"]
    assert (pytester.path / "out" / "summary.md").read_text().startswith("# pytest-backendbench report")
    assert "<svg" in (pytester.path / "out" / "report.html").read_text()


@pytest.mark.parametrize(
    ("flag", "failed_items", "categories"),
    [
        ("--skip-ownership", {"test_other_user_cannot_read"}, {"authorization": 1}),
        ("--accept-invalid", {"test_empty_title_rejected"}, {"validation": 1}),
    ],
)
def test_defective_candidates_fail_in_the_expected_category(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], flag: str, failed_items: set[str], categories: dict[str, int]
) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('bad', flag)}", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(passed=7 - len(failed_items), failed=len(failed_items))
    report = read_report(pytester.path / "out")
    assert {n for n, o in outcomes_by_name(report).items() if o == "failed"} == failed_items
    assert report["summary"]["failures_by_category"] == categories
    assert report["summary"]["sr"] == 0.0
    assert report["tasks"][0]["metrics"]["req_acc"] == 0.75


def test_candidate_that_never_listens_fails_every_item_at_startup(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    started = time.monotonic()
    result = pytester.runpytest(f"--candidate={make_candidate('deaf', '--never-listen')}", "--bench-report-dir=out", "--bench-boot-timeout=3", *RUN)
    assert time.monotonic() - started < 60
    result.assert_outcomes(passed=1, failed=6)
    result.stdout.fnmatch_lines(["*[[]startup[]] candidate for 'notes' was not ready after 3s: waited for TCP port*"])
    report = read_report(pytester.path / "out")
    task = report["tasks"][0]
    assert task["phase_failed"] == "startup"
    assert {i["phase"] for i in task["items"] if i["outcome"] == "failed"} == {"startup"}
    assert report["summary"]["viability"] == 0.0
    assert report["summary"]["failures_by_phase"] == {"startup": 4}  # oracle items only


def test_candidate_that_crashes_mid_run_fails_the_rest_with_its_exit_code(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('crashy', '--crash-after-5')}", "--bench-report-dir=out", *RUN)
    report = read_report(pytester.path / "out")
    items = report["tasks"][0]["items"]
    failed = [i for i in items if i["outcome"] == "failed"]
    assert failed, result.stdout.str()
    assert any("exited with code 3" in i["message"] for i in failed)
    assert report["tasks"][0]["finished"]


def test_hanging_request_fails_with_a_one_line_reason(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    started = time.monotonic()
    pytester.runpytest(f"--candidate={make_candidate('hangs', '--hang')}", "--bench-report-dir=out", "--bench-request-timeout=1", *RUN)
    assert time.monotonic() - started < 60
    report = read_report(pytester.path / "out")
    by_name = {i["nodeid"].split("::")[-1]: i for i in report["tasks"][0]["items"]}
    assert by_name["test_other_user_cannot_read"]["outcome"] == "failed"
    assert re.match(r"GET /notes/\d+: no answer within the request timeout", by_name["test_other_user_cannot_read"]["message"])


def test_missing_candidate_counts_as_failed(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    (pytester.path / "empty-root").mkdir()
    result = pytester.runpytest("--candidate=empty-root", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(failed=7)
    report = read_report(pytester.path / "out")
    assert report["tasks"][0]["phase_failed"] == "missing"
    assert report["summary"]["sr"] == 0.0 and report["summary"]["tasks"] == 1


def test_unmarked_oracle_item_is_a_collection_error(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    (pytester.path / "oracles" / "notes" / "test_unmarked.py").write_text("def test_x(http):\n    pass\n")
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", *RUN)
    result.stdout.fnmatch_lines(["*test_unmarked.py::test_x: oracle items need @pytest.mark.requirement*"])
    result.assert_outcomes(passed=7, errors=1)


def test_unknown_requirement_is_a_collection_error(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    (pytester.path / "oracles" / "notes" / "test_bad.py").write_text(
        "import pytest\n@pytest.mark.requirement('R99')\n@pytest.mark.category('state')\ndef test_x(http):\n    pass\n"
    )
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", *RUN)
    result.stdout.fnmatch_lines(["*requirement(s) R99 not in task.yaml (known: R1, R2, R3, R4)*"])


@pytest.mark.parametrize(
    ("markers", "expected"),
    [
        ("@pytest.mark.category('security')\n", "*security items need @pytest.mark.cwe(<number>)*"),
        ("@pytest.mark.category('security')\n@pytest.mark.cwe('639')\n", "*cwe(...) takes one or several positive CWE numbers*"),
    ],
    ids=["security-without-cwe", "cwe-not-a-number"],
)
def test_security_items_need_a_cwe_number(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], markers: str, expected: str) -> None:
    (pytester.path / "oracles" / "notes" / "test_sec.py").write_text(f"import pytest\n@pytest.mark.requirement('R1')\n{markers}def test_x(http):\n    pass\n")
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", *RUN)
    result.stdout.fnmatch_lines([expected])


def test_failed_security_items_are_counted_per_cwe(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    (pytester.path / "oracles" / "notes" / "test_sec.py").write_text(
        "import pytest\n@pytest.mark.requirement('R1')\n@pytest.mark.category('security')\n@pytest.mark.cwe(639)\n"
        "def test_idor(http):\n    assert False, 'another user read the note'\n"
    )
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(passed=7, failed=1)
    report = read_report(pytester.path / "out")
    assert report["summary"]["security_failures_by_cwe"] == {"CWE-639": 1}
    assert [i["cwe"] for i in report["tasks"][0]["items"] if i["nodeid"].endswith("test_idor")] == [639]
    assert "| CWE-639 | 100.0% (1) |" in (pytester.path / "out" / "summary.md").read_text()  # samples exhibiting it (failed security items)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id: notes\ntitle: x\nport: http\n", "*task.yaml: port: got 'http'; expected a TCP port number*"),
        ("id: other\ntitle: x\n", "*task.yaml: id: 'other' differs from the folder name 'notes'*"),
        ("id: notes\ntitle: [unclosed\n", "*task.yaml: not valid YAML at line 3*"),
        ("id: notes\ntitle: x\nkind: mobile\n", "*task.yaml: kind: got 'mobile'; expected one of backend, frontend, fullstack*"),
    ],
)
def test_malformed_task_yaml_names_file_and_field(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path], text: str, expected: str) -> None:
    (pytester.path / "benchmarks" / "notes" / "task.yaml").write_text(text)
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", *RUN)
    result.stdout.fnmatch_lines([expected])
    assert "Traceback" not in result.stdout.str()
    assert (pytester.path / "out" / "report.json").is_file()


def test_malformed_openapi_is_a_collection_error(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    (pytester.path / "benchmarks" / "notes" / "openapi.yaml").write_text("openapi: 3.1.0\ninfo: {title: x}\npaths: {}\n")
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", *RUN)
    result.stdout.fnmatch_lines(["*openapi.yaml: *invalid OpenAPI document*version*"])
    result.assert_outcomes(errors=5)  # the task file's collection error, then each oracle item
    assert "Traceback" not in result.stdout.str()


def test_malformed_candidate_yaml_fails_the_task_at_build(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    root = pytester.path / "root"
    make_candidate("notes", where=root)
    (root / "notes" / "candidate.yaml").write_text("run: [python, app.py]\n")
    result = pytester.runpytest(f"--candidate={root}", "--bench-report-dir=out", *RUN)
    result.stdout.fnmatch_lines(["*candidate.yaml: run: got [[]'python', 'app.py'[]]; expected a string*"])
    assert read_report(pytester.path / "out")["tasks"][0]["phase_failed"] == "build"


def test_oracle_tier_selects_cumulative_tiers(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", "--oracle-tier=base", *RUN)
    result.assert_outcomes(passed=6)
    assert list(read_report(pytester.path / "out")["summary"]["sr_by_tier"]) == ["base"]


def test_an_oracle_tier_no_task_has_is_a_usage_error_that_writes_nothing(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    good = make_candidate("good")
    result = pytester.runpytest(f"--candidate={good}", "--bench-report-dir=out", "--oracle-tier=r9", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--oracle-tier 'r9': the selected tasks have tiers base, r1 (or use final)*"])
    assert not (pytester.path / "out").exists() or not any((pytester.path / "out").iterdir())
    result = pytester.runpytest(f"--candidate={good}", "--bench-report-dir=out2", "--oracle-tier=latest", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--oracle-tier='latest': expected base, r1, r2, ... or final (run oracle tiers*"])
    assert not (pytester.path / "out2").exists()


def test_bad_values_and_conflicting_pytest_options_are_usage_errors_in_words(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    good = make_candidate("good")
    result = pytester.runpytest(f"--candidate={good}", "--bench-repeat=0", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-repeat='0': expected a whole number of at least 1 (run every candidate N times*"])
    result = pytester.runpytest(f"--candidate={good}", "--import-mode=prepend", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--import-mode=prepend: oracle modules of different tasks share file names*write --import-mode=importlib"])


def test_a_bench_run_leaves_pytests_options_and_args_as_the_command_line_gave_them(
    pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]
) -> None:
    """The import mode and --continue-on-collection-errors come from the command line the plugin
    completed before parsing; config.args stays what pytest chose; the bench's own items run."""
    pytester.makeconftest(
        """
        def pytest_collection_finish(session):
            option = session.config.option
            print("OPTIONS", option.importmode, option.continue_on_collection_errors, session.config.args)
        """
    )
    result = pytester.runpytest_subprocess(f"--candidate={make_candidate('good')}", "--bench-report-dir=out", "-s", *RUN)
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines([f"OPTIONS importlib True [[]'{pytester.path}'[]]"])


def test_bench_category_runs_only_those_oracle_items(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('flawed', '--skip-ownership')}", "--bench-report-dir=out", "--bench-category=validation", *RUN)
    result.assert_outcomes(passed=4)  # build, boot, smoke and the one validation item; the ownership item is not run
    kinds = {(i["kind"], i["category"]) for i in read_report(pytester.path / "out")["tasks"][0]["items"]}
    assert ("http", "validation") in kinds and ("http", "authorization") not in kinds
    result = pytester.runpytest(f"--candidate={make_candidate('flawed2', '--skip-ownership')}", "--bench-category=authorisation", *RUN)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bench-category='authorisation': expected one of *authorization*"])


def test_samples_give_pass_at_k(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    root = pytester.path / "samples"
    make_candidate("sample-1", where=root / "notes")
    make_candidate("sample-2", "--skip-ownership", where=root / "notes")
    result = pytester.runpytest(f"--candidate={root}", "--bench-report-dir=out", *RUN)
    result.assert_outcomes(passed=13, failed=1)
    summary = read_report(pytester.path / "out")["summary"]
    assert summary["pass_at_k"] == {"1": 0.5, "2": 1.0}
    assert summary["sr"] == 0.5


def _comparable(report: dict) -> dict:
    keep = {}
    for task in report["tasks"]:
        keep[task["candidate"]] = sorted((i["nodeid"], i["outcome"], i["requests"], i["contract_checked"]) for i in task["items"])
    summary = {k: v for k, v in report["summary"].items()}
    return {"tasks": keep, "summary": summary}


def test_xdist_run_gives_the_same_report(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    good = make_candidate("good")
    pytester.runpytest(f"--candidate={good}", "--bench-report-dir=serial", *RUN).assert_outcomes(passed=7)
    parallel = pytester.runpytest_subprocess(f"--candidate={good}", "--bench-report-dir=parallel", "-n", "2", "--dist", "loadgroup", *RUN)
    parallel.assert_outcomes(passed=7)
    assert _comparable(read_report(pytester.path / "serial")) == _comparable(read_report(pytester.path / "parallel"))


def test_resume_skips_finished_candidates(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    good = make_candidate("good")
    pytester.runpytest(f"--candidate={good}", "--bench-report-dir=first", *RUN).assert_outcomes(passed=7)
    result = pytester.runpytest(f"--candidate={good}", "--bench-report-dir=second", "--bench-resume=first", *RUN)
    result.assert_outcomes()
    assert read_report(pytester.path / "second")["summary"]["sr"] == 1.0


def test_sigint_during_items_leaves_a_report_and_no_processes(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    hangs = make_candidate("hangs", "--hang")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest", f"--candidate={hangs}", "--bench-report-dir=out", "--bench-request-timeout=60", *RUN],
        cwd=pytester.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "BACKENDBENCH_CACHE": os.environ["BACKENDBENCH_CACHE"]},
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not _candidate_pids(hangs):
        time.sleep(0.2)
    assert _candidate_pids(hangs), "the candidate never started"
    time.sleep(1.5)  # now inside an oracle item's hanging request
    proc.send_signal(signal.SIGINT)
    output = proc.communicate(timeout=60)[0].decode()
    assert "KeyboardInterrupt" in output
    report = read_report(pytester.path / "out")
    assert report["manifest"]["interrupted"] is True
    assert not _candidate_pids(hangs)


def _candidate_pids(folder: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "cwd") == str(folder):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def test_plain_pytest_collects_no_oracles(pytester: pytest.Pytester, bench: Path) -> None:
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    result = pytester.runpytest(*RUN[1:])
    result.assert_outcomes(passed=1)


def test_repeat_reports_flip_rate_pass_hat_k_and_interval(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    flaky = make_candidate("flaky", "--alternate")
    result = pytester.runpytest(f"--candidate={flaky}", "--bench-report-dir=out", "--bench-repeat=2", *RUN)
    result.assert_outcomes(passed=13, failed=1)
    result.stdout.fnmatch_lines(["repeats (flip rate) * 2 (25.0%)", "flaky * notes: oracles/notes/test_notes.py::test_other_user_cannot_read"])
    report = read_report(pytester.path / "out")
    variance = report["summary"]["variance"]
    assert variance["flip_rate"] == 0.25
    assert variance["pass_hat_k"] == {"1": 0.5, "2": 0.0}
    low, high = variance["sr_ci95"]
    assert 0.0 < low < 0.5 < high < 1.0
    assert [t["repeat"] for t in report["tasks"]] == [1, 2]
    assert report["summary"]["pass_at_k"] == {}


def test_every_oracle_fixture_comes_with_a_benchmark_session(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest("--fixtures", f"--candidate={make_candidate('good')}", *RUN)
    for name in ("service", "http", "mocks", "db"):
        result.stdout.fnmatch_lines([f"{name} -- *"])


def test_parallel_runs_must_keep_tasks_together(pytester: pytest.Pytester, bench: Path, make_candidate: Callable[..., Path]) -> None:
    result = pytester.runpytest(f"--candidate={make_candidate('good')}", "-n", "2", *RUN)
    result.stderr.fnmatch_lines(["*-n with --dist load would split a task's items over workers*add --dist loadgroup"])
