"""The 0.1 spellings of renamed options keep working for one release, unless someone else owns them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_backendbench.legacy_options import RENAMED

from .conftest import read_report


def test_old_spellings_are_translated_with_a_notice(pytester: pytest.Pytester, bench: Path, make_candidate) -> None:  # type: ignore[no-untyped-def]
    candidate = make_candidate("good")
    result = pytester.runpytest(f"--candidate={candidate}", "--runtime=process", "--report-dir", "old", "--task=notes", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=7)
    result.stdout.fnmatch_lines(["*PytestDeprecationWarning: backendbench: renamed options (--runtime -> --bench-runtime, --report-dir -> --bench-report-dir, --task -> --bench-task)*"])
    assert read_report(bench / "old")["manifest"]["runtime"].startswith("process")


def test_an_old_spelling_another_plugin_owns_stays_theirs(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        def pytest_addoption(parser):
            parser.addoption("--headed", action="store_true")
            parser.addoption("--model", default="none")

        def pytest_report_header(config):
            return f"theirs: headed={config.getoption('headed')} model={config.getoption('model')}"
        """
    )
    pytester.makepyfile("def test_one():\n    pass\n")
    result = pytester.runpytest("--headed", "--model=gpt", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["theirs: headed=True model=gpt"])
    assert "renamed options" not in result.stderr.str()


def test_every_new_name_exists(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    help_text = result.stdout.str()
    missing = [new for new in RENAMED.values() if new not in help_text]
    assert missing == []
