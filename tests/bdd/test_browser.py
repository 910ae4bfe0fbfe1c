"""The shared browser: lazy start, isolation between scenarios, failure capture, no leftovers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser, browser_available
from pytest_backendbench.errors import BrowserError, HarnessError

from . import conftest
from .conftest import StaticServer, live_pids, processes_mentioning


def test_missing_chromium_names_the_packages_and_the_option() -> None:
    with pytest.raises(BrowserError) as info:
        BrowserOptions(chromium="/nonexistent/chromium").chromium_path()
    message = str(info.value)
    assert "/nonexistent/chromium" in message
    assert "apt-get install chromium chromium-driver" in message
    assert "--chromium" in message and "--chromedriver" in message
    assert isinstance(info.value, HarnessError)


def test_missing_chromedriver_is_reported_before_anything_starts() -> None:
    browser = SharedBrowser(BrowserOptions(chromedriver="/nonexistent/chromedriver"))
    if browser_available(BrowserOptions(chromedriver="/nonexistent/chromedriver")) is None:
        pytest.fail("a nonexistent chromedriver was reported as available")
    with pytest.raises(BrowserError, match=r"chromedriver not found at '/nonexistent/chromedriver'.*apt-get install"):
        browser.start()
    assert not browser.started and browser.process_ids() == set()


def test_arguments_are_headless_isolated_and_sized() -> None:
    args = BrowserOptions(locale="de-DE", extra_args=("--mute-audio",)).arguments(Path("/tmp/profile"))
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--window-size=1280,1024",
        "--user-data-dir=/tmp/profile",
        "--lang=de-DE",
        "--mute-audio",
    ):
        assert flag in args
    env = BrowserOptions(locale="de-DE").environment(Path("/tmp/home"))
    assert env["LANG"] == "de_DE.UTF-8" and env["XDG_CONFIG_HOME"] == "/tmp/home/config"
    assert "--headless=new" not in BrowserOptions(headless=False).arguments(Path("/tmp/p"))


STORAGE_PROBE = (
    "return [localStorage.getItem('todos'), sessionStorage.getItem('visits'), document.cookie,"
    " document.querySelector('[data-testid=visit-count]').textContent]"
)


@pytest.mark.browser
def test_reset_clears_storage_and_cookies_without_relaunching(browser: SharedBrowser, todo_app: StaticServer) -> None:
    driver = browser.driver
    launches = browser.launches
    driver.get(todo_app.base_url + "/")
    driver.execute_script("localStorage.setItem('todos', '[\"x\"]'); document.cookie = 'seen=1'")
    driver.get(todo_app.base_url + "/")
    local, visits, cookie, shown = driver.execute_script(STORAGE_PROBE)
    assert (local, visits, cookie, shown) == ('["x"]', "2", "seen=1", "2")

    browser.reset(todo_app.base_url)
    assert driver.current_url == "about:blank"
    driver.get(todo_app.base_url + "/")
    local, visits, cookie, shown = driver.execute_script(STORAGE_PROBE)
    assert local is None and cookie == "" and visits == "1" and shown == "1"
    assert browser.launches == launches


@pytest.mark.browser
def test_reset_closes_extra_windows_and_restores_driver_settings(browser: SharedBrowser, todo_app: StaticServer) -> None:
    driver = browser.driver
    launches = browser.launches
    driver.get(todo_app.base_url + "/")
    driver.switch_to.new_window("window")
    driver.get(todo_app.base_url + "/")
    driver.implicitly_wait(7)
    driver.set_window_size(400, 300)
    driver.execute_script("alert('left open')")

    driver.switch_to.window(driver.window_handles[0])
    driver.execute_script("setTimeout(() => alert('left open too'), 0)")
    time.sleep(0.2)

    browser.reset(todo_app.base_url)
    assert browser.launches == launches and browser.driver is driver
    assert len(driver.window_handles) == 1
    assert driver.timeouts.implicit_wait == 0
    assert driver.get_window_size() == {"width": 1280, "height": 1024}


BUSY_PAGE = """<!DOCTYPE html><html><body><p id="state">busy</p><a id="next" href="other.html">other</a><script>
  setInterval(() => localStorage.setItem('tick', String(Date.now())), 1);
  addEventListener('pagehide', () => { localStorage.setItem('left', '1'); document.cookie = 'left=1'; });
  document.getElementById('state').onclick = (e) => { e.target.textContent = 'clicked'; };
</script></body></html>"""
PROBE_PAGE = "<!DOCTYPE html><html><body><p>other</p></body></html>"


@pytest.mark.browser
def test_reset_clears_what_the_last_page_writes_while_it_unloads(
    browser: SharedBrowser, serve: Callable[[Path], StaticServer], tmp_path: Path
) -> None:
    """A page's timers and pagehide handler write storage until it is gone: reset must clear after that.

    Also: the back/forward cache stays on (as in a normal Chrome): back() restores a page's state.
    """
    (tmp_path / "index.html").write_text(BUSY_PAGE)
    (tmp_path / "other.html").write_text(PROBE_PAGE)
    site = serve(tmp_path)
    driver = browser.driver
    for _ in range(3):
        driver.get(site.base_url + "/index.html")
        time.sleep(0.05)
        browser.reset(site.base_url)
        assert driver.current_url == "about:blank"
        driver.get(site.base_url + "/other.html")
        probe = "return [localStorage.getItem('tick'), localStorage.getItem('left'), document.cookie]"
        assert driver.execute_script(probe) == [None, None, ""]
    driver.get(site.base_url + "/index.html")
    driver.find_element("id", "state").click()
    driver.find_element("id", "next").click()
    driver.back()
    assert driver.find_element("id", "state").text == "clicked"
    browser.reset(site.base_url)


@pytest.mark.browser
def test_capture_failure_has_screenshot_url_and_console(browser: SharedBrowser, todo_app: StaticServer) -> None:
    browser.driver.get(todo_app.base_url + "/")
    browser.driver.execute_script("console.error('something broke on purpose')")
    capture = browser.capture_failure()
    assert capture.screenshot is not None and capture.screenshot.startswith(b"\x89PNG\r\n\x1a\n")
    assert capture.url == todo_app.base_url + "/"
    assert any("todo app ready" in line for line in capture.console)
    assert any("something broke on purpose" in line and "SEVERE" in line for line in capture.console)
    assert capture.problems == []
    browser.reset(todo_app.base_url)
    assert browser.capture_failure().console == []  # reset drops the last scenario's messages


@pytest.mark.browser
def test_a_dead_browser_is_relaunched_by_reset(todo_app: StaticServer) -> None:
    with SharedBrowser() as browser:
        browser.reset(todo_app.base_url)
        old = browser.process_ids()
        for pid in old:
            os.kill(pid, signal.SIGKILL)
        browser.reset(todo_app.base_url)
        assert browser.launches == 2
        browser.driver.get(todo_app.base_url + "/")
        assert browser.driver.title == "Todo"
        assert not live_pids(old)


@pytest.mark.browser
def test_close_leaves_no_chromium_or_chromedriver_process(todo_app: StaticServer) -> None:
    browser = SharedBrowser()
    browser.reset(todo_app.base_url)
    browser.driver.get(todo_app.base_url + "/")
    pids = browser.process_ids()
    home = browser._home
    assert home is not None and home.is_dir()
    names = {Path(f"/proc/{pid}/exe").resolve().name for pid in pids}
    assert {"chromedriver", "chromium"} <= names, names
    browser.close()
    assert not live_pids(pids)
    assert not processes_mentioning(str(home))
    assert not home.exists()
    browser.close()  # idempotent


CTRL_C_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from pytest_backendbench.bdd.browser.shared import SharedBrowser
    browser = SharedBrowser()
    browser.start()
    print(browser._home, *sorted(browser.process_ids()), flush=True)
    while True:
        time.sleep(0.1)
    """
)


@pytest.mark.browser
def test_ctrl_c_leaves_no_process_behind(tmp_path: Path) -> None:
    script = tmp_path / "hold_browser.py"
    script.write_text(CTRL_C_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        assert proc.stdout is not None
        home, *pids = proc.stdout.readline().split()
        assert pids, "the browser did not start"
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    deadline = time.monotonic() + 5
    while live_pids({int(p) for p in pids}) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not live_pids({int(p) for p in pids})
    assert not processes_mentioning(home)
    assert not Path(home).exists()


class MarkedItem:
    """Just enough of a pytest item for the browser gate."""

    def get_closest_marker(self, name: str) -> object:
        return object() if name == "browser" else None


def test_browser_tests_skip_without_chromium_but_fail_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "browser_available", lambda: "Chromium not found (looked for chromium)")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs Chromium and chromedriver: Chromium not found"):
        conftest.pytest_runtest_setup(MarkedItem())  # type: ignore[arg-type]
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set and the browser tests cannot run"):
        conftest.pytest_runtest_setup(MarkedItem())  # type: ignore[arg-type]
    monkeypatch.setattr(conftest, "browser_available", lambda: None)
    conftest.pytest_runtest_setup(MarkedItem())  # type: ignore[arg-type]
