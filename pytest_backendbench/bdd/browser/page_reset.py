"""What a scenario's tab is put back to before the next scenario (:meth:`.SharedBrowser.reset`).

One tab, the last page unloaded, no cookies, cache or storage of the origins it used, the
session settings a step may have changed restored, and ``Math.random`` seeded for the next
scenario (:mod:`.page_random`). Kept apart from the browser's lifecycle (:mod:`.shared`): this
is what isolation between scenarios means, in driver calls.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .options import BrowserOptions
from .page_random import seeded_random_script

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

# "all" would also clear shader and other browser caches, several times slower; local_storage
# covers sessionStorage as well.
STORAGE_TYPES = "local_storage,indexeddb,websql,cache_storage,service_workers,file_systems,cookies"


def clean_tab(
    driver: WebDriver, origins: Iterable[str], options: BrowserOptions, random_script: str | None, random_seed_key: str | None
) -> str | None:
    """Put the tab back for the next scenario; returns the identifier of its seeded-random script (None: unseeded).

    ``origins`` get their storage cleared; ``random_script`` is the script the last scenario
    registered, removed here.
    """
    from selenium.common.exceptions import UnexpectedAlertPresentException, WebDriverException
    from selenium.webdriver.remote.command import Command

    handles = driver.window_handles
    if len(handles) > 1:
        for handle in handles[1:]:
            driver.switch_to.window(handle)
            try:
                driver.close()
            except UnexpectedAlertPresentException:
                driver.close()  # chromedriver dismissed the alert when it reported it
        driver.switch_to.window(handles[0])
    try:
        url = driver.current_url
    except UnexpectedAlertPresentException:
        url = driver.current_url  # chromedriver dismissed the alert when it reported it
    if url != "about:blank":
        leave_page(driver)  # the last page's scripts must not write storage after it is cleared
    driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    for origin in sorted(origins):
        # clears sessionStorage too (tests/bdd/test_browser.py checks), so no new tab is needed
        driver.execute_cdp_cmd("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": STORAGE_TYPES})
    # one round trip; selenium's Timeouts object would drop the implicit wait of 0
    driver.execute(
        Command.SET_TIMEOUTS,
        {"implicit": 0, "pageLoad": int(options.page_load_timeout_s * 1000), "script": int(options.script_timeout_s * 1000)},
    )
    width, height = options.window_size
    driver.set_window_size(width, height)
    driver.get_log("browser")  # drop the last scenario's console messages
    if random_script is not None:
        with contextlib.suppress(WebDriverException):  # gone with its tab, if the page closed that one
            driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": random_script})
    if random_seed_key is None:
        return None
    added = driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": seeded_random_script(random_seed_key)})
    return str(added["identifier"])


def leave_page(driver: WebDriver) -> None:
    """Unload the current page: its timers and handlers stop before its storage is cleared.

    A page-initiated ``location.replace('about:blank')`` stays in the page's renderer and
    leaves no history entry to keep in the back/forward cache; ``driver.get('about:blank')``
    is browser-initiated, so with the back/forward cache on (as in a normal Chrome) Chromium
    parks the page and starts two new renderer processes per scenario: about 0.15 s more of
    Chromium's CPU time per scenario, a quarter of it (measured for bench/e2edev_speed.py). A page where the script cannot run (an error
    page, an alert that opened meanwhile) is left the old way.
    """
    from selenium.common.exceptions import WebDriverException

    try:
        driver.execute_script("location.replace('about:blank')")
        if driver.current_url == "about:blank":  # chromedriver waits for the navigation it started
            return
    except WebDriverException:
        pass
    driver.get("about:blank")


def origin_of(url: str) -> str:
    """``scheme://host:port`` of a URL (the URL itself when it has none)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else url
