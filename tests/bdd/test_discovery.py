"""Browser discovery against the real binaries of this machine, and with them hidden (an empty PATH)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.discovery import BrowserInstall, BrowserSearch, binary_version, discover_browser, install_hint
from pytest_backendbench.bdd.browser.shared import SharedBrowser
from pytest_backendbench.errors import BrowserError
from pytest_backendbench.host.install_hints import current_platform

from .conftest import TODO_APP, TODO_BENCH


@pytest.mark.browser
def test_this_machines_chromium_and_driver_are_found_with_matching_versions() -> None:
    found = discover_browser()
    assert found.source in ("debian", "chrome")
    assert found.chromium_version and found.chromium_version.split()[0] in ("Chromium", "Google")
    assert found.chromedriver_version and found.chromedriver_version.startswith("ChromeDriver ")
    assert found.versions_match is True
    assert os.path.basename(found.chromium) in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


@pytest.mark.browser
def test_explicit_options_win_over_the_path(tmp_path: Path) -> None:
    real = discover_browser()
    found = discover_browser(real.chromium, real.chromedriver, path=str(tmp_path))  # nothing on PATH: the options alone
    assert (found.source, found.chromium, found.chromedriver) == ("option", real.chromium, real.chromedriver)


@pytest.mark.browser
def test_environment_names_the_binaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = discover_browser()
    monkeypatch.setenv("BACKENDBENCH_CHROMIUM", real.chromium)
    monkeypatch.setenv("BACKENDBENCH_CHROMEDRIVER", real.chromedriver)
    assert discover_browser(path=str(tmp_path)).source == "environment"


@pytest.mark.browser
def test_a_driver_of_another_major_version_is_passed_over(tmp_path: Path) -> None:
    real = discover_browser()
    fake_driver = tmp_path / "chromedriver"
    fake_driver.write_text("#!/bin/sh\necho 'ChromeDriver 99.0.4844.51 (abc)'\n")
    fake_driver.chmod(0o755)
    os.symlink(real.chromium, tmp_path / "chromium")
    with pytest.raises(BrowserError) as info:
        discover_browser(path=str(tmp_path), selenium_manager=False)
    assert "ChromeDriver 99.0.4844.51: major versions differ" in str(info.value)
    assert BrowserInstall("c", "d", "x", "Chromium 156.0.1", "ChromeDriver 99.0").versions_match is False
    assert BrowserInstall("c", "d", "x", None, "ChromeDriver 99.0").versions_match is None


def test_nothing_on_path_falls_through_selenium_manager_fast_with_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SE_OFFLINE", "true")
    monkeypatch.delenv("BACKENDBENCH_CHROMIUM", raising=False)
    monkeypatch.delenv("BACKENDBENCH_CHROMEDRIVER", raising=False)
    search = BrowserSearch(path=str(tmp_path))
    started = time.monotonic()
    with pytest.raises(BrowserError) as info:
        search.find()
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert message.startswith("no browser for Gherkin scenarios (debian: none of chromium, chromium-browser on PATH; chrome: ")
    assert "selenium-manager offline (SE_OFFLINE)" in message
    assert message.endswith(install_hint())
    assert f"to get one: {current_platform().install('chromium')}; or point --chromium" in message
    assert elapsed < search.selenium_manager_timeout_s


def test_a_missing_explicit_binary_is_named(tmp_path: Path) -> None:
    with pytest.raises(BrowserError, match=r"Chromium not found at '/nonexistent/chromium' \(from --chromium\); to get one: "):
        discover_browser("/nonexistent/chromium", path=str(tmp_path))


def test_install_hint_is_the_debian_apt_line_here() -> None:
    if current_platform().family != "debian":
        pytest.skip("this machine is not Debian")
    assert install_hint().startswith("to get one: apt-get install chromium chromium-driver;")


def test_binary_version_of_something_that_is_no_browser() -> None:
    assert binary_version("/nonexistent/chromium") is None
    assert binary_version(shutil.which("true") or "/bin/true") is None


def test_shared_browser_searches_once_then_repeats_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("SE_OFFLINE", "true")
    browser = SharedBrowser()
    with pytest.raises(BrowserError) as first:
        browser.start()
    monkeypatch.setenv("PATH", os.defpath)  # a browser appearing later does not change this session's verdict
    with pytest.raises(BrowserError) as second:
        browser.reset("http://127.0.0.1:1")
    assert str(second.value) == str(first.value)
    assert not browser.started


@pytest.mark.slow
def test_without_a_browser_gherkin_items_are_harness_errors_naming_the_fix(
    pytester: pytest.Pytester, shared_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.setenv("SE_OFFLINE", "true")
    shutil.copytree(TODO_BENCH, pytester.path, dirs_exist_ok=True)
    candidate = pytester.path / "candidate"
    shutil.copytree(TODO_APP, candidate)

    result = pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "--bench-report-dir=out", "-p", "no:cacheprovider")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) == 0
    assert outcomes["errors"] >= 14  # every scenario of the todo task
    result.stdout.fnmatch_lines([f"*no browser for Gherkin scenarios (debian: none of chromium*{install_hint()}*"])
