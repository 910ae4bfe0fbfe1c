"""Browser locale and window size: what E2EDev's step code assumes of the browser it runs in.

Date and time inputs take keys in the browser locale's field order (zh-CN: year, month, day and
24-hour time; en-US: month, day, year and AM/PM), which comes from LANG plus Debian's
chromium-l10n, not from ``--lang`` alone. ``maximize_window()`` in headless Chromium resizes to
the screen, which is 800x600 unless the browser is told otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser

from .conftest import DATA, StaticServer


@pytest.fixture(scope="module")
def locale_page(serve: Callable[[Path], StaticServer]) -> StaticServer:
    return serve(DATA / "locale")


@pytest.fixture(scope="module")
def browsers() -> Iterator[dict[str, SharedBrowser]]:
    started = {locale: SharedBrowser(BrowserOptions(locale=locale, cdn="off")) for locale in ("zh-CN", "en-US")}
    yield started
    for browser in started.values():
        browser.close()


def _type(browser: SharedBrowser, page: StaticServer, date_keys: tuple[str, ...], time_keys: str) -> list[str]:
    browser.reset(page.base_url)
    driver = browser.driver
    driver.get(page.base_url + "/index.html")
    driver.find_element(By.ID, "date").send_keys(*date_keys)
    driver.find_element(By.ID, "time").send_keys(time_keys)
    return list(driver.execute_script("return [navigator.language, document.getElementById('date').value, document.getElementById('time').value]"))


@pytest.mark.browser
def test_date_and_time_fields_follow_the_browser_locale(browsers: dict[str, SharedBrowser], locale_page: StaticServer) -> None:
    zh_keys = ("2024", Keys.ARROW_RIGHT, "03", "15")
    assert _type(browsers["zh-CN"], locale_page, zh_keys, "09:30") == ["zh-CN", "2024-03-15", "09:30"]
    language, date, time_value = _type(browsers["en-US"], locale_page, zh_keys, "09:30")
    assert language == "en-US" and date != "2024-03-15" and time_value == ""  # no AM/PM typed: no value
    assert _type(browsers["en-US"], locale_page, ("03152024",), "0930AM") == ["en-US", "2024-03-15", "09:30"]


@pytest.mark.browser
def test_use_locale_relaunches_only_when_the_locale_changes(locale_page: StaticServer) -> None:
    with SharedBrowser(BrowserOptions(cdn="off")) as browser:
        browser.reset(locale_page.base_url)
        browser.use_locale(None)
        assert browser.launches == 1 and browser.started
        browser.use_locale("zh-CN")
        assert not browser.started
        assert _type(browser, locale_page, ("2024", Keys.ARROW_RIGHT, "0315"), "09:30") == ["zh-CN", "2024-03-15", "09:30"]
        assert browser.launches == 2  # relaunched once, for the new locale


@pytest.mark.browser
def test_maximize_window_keeps_the_configured_viewport(locale_page: StaticServer) -> None:
    with SharedBrowser(BrowserOptions(cdn="off", window_size=(1280, 1024))) as browser:
        browser.reset(locale_page.base_url)
        driver = browser.driver
        driver.get(locale_page.base_url + "/index.html")
        driver.maximize_window()
        assert driver.get_window_size() == {"width": 1280, "height": 1024}
        assert driver.execute_script("return [screen.width, screen.height]") == [1280, 1024]
        assert driver.execute_script("return window.innerWidth") >= 1200
        import io

        from PIL import Image  # the e2edev extra

        assert Image.open(io.BytesIO(driver.get_screenshot_as_png())).size[0] == 1280
