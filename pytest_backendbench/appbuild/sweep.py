"""AB-06, the clickable sweep: click every visible, enabled control, each from a fresh page.

From the primary route, the sweep lists the controls (same-origin links, buttons, elements with
click handlers; one per distinct label, so a list of 200 "Register" buttons costs one click),
and clicks each from a fresh state: the browser reset (no cookies, storage or cache), the
primary route loaded, the clicks that led to the control replayed. The controls a click reveals
are swept next, breadth-first, to ``depth`` clicks and at most ``budget`` clicks in all.

Per click it records what went wrong (an uncaught error, a console error, a same-origin response
>= 500, a navigation to an error page, a page that stopped answering) and what happened at all
(a DOM change, a navigation, a request, a dialog, a new window, a download, a form the browser
refused as invalid); a click with none of these did nothing visible. Every WebDriver call runs
under a deadline (``SharedBrowser.bounded``): a page that stops answering is a finding of that
click and the browser is relaunched for the next one; a page that never settles is noted and the
sweep goes on.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..bdd.browser.page_reset import origin_of
from ..bdd.browser.shared import BrowserHung, SharedBrowser, error_first_line
from .grades import SweepCounts
from .page_scripts import CONTROLS, FIND_AND_SCROLL, RECORDER, SHORT_TIMER_S, STATE

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

T = TypeVar("T")

CALL_TIMEOUT_S = 20.0
"""One WebDriver call (a click, a script) longer than this faces a page that stopped answering."""
LOAD_TIMEOUT_S = 45.0
SETTLE_QUIET_S = 0.25
"""A page has settled when nothing changed in the DOM for this long and no request is pending."""
SETTLE_CAP_S = 5.0
"""How long the sweep waits for a page to settle before it notes that it never did and goes on."""
SWEEP_DEADLINE_S = 240.0
"""The whole sweep of one candidate stops clicking after this long (noted, not a failure)."""

BROKEN = ("uncaught-error", "server-error", "error-page", "hung")
"""Findings that make a control broken (AB-06 FAIL)."""

_STATUS = re.compile(r"status of (\d{3})")
_URL = re.compile(r"^(\S+)")


@dataclass(frozen=True)
class Control:
    """A control found on a page: how to find it again and how a person would name it."""

    selector: str
    text: str
    tag: str
    signature: str
    path: tuple[str, ...] = ()
    """The selectors clicked before, from the primary route, to reach the page showing it."""

    @property
    def depth(self) -> int:
        """Clicks needed before this control is on the page."""
        return len(self.path)


@dataclass
class Finding:
    """Something wrong a click caused (``kind`` one of BROKEN, ``console-error``, ``dead``)."""

    kind: str
    detail: str


@dataclass
class ClickOutcome:
    """One control clicked from a fresh page: what it did and what went wrong."""

    selector: str
    text: str
    tag: str
    depth: int
    effects: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    settled: bool = True
    screenshot: str | None = None
    note: str = ""
    not_clicked: str = ""
    """Why the control could not be clicked (gone after a reload, a driver error); such outcomes are not graded."""

    @property
    def broken(self) -> bool:
        """Whether the click raised, errored on the server, reached an error page or hung the page."""
        return any(f.kind in BROKEN for f in self.findings)


@dataclass
class SweepReport:
    """Everything a sweep did, for the grade, the report and its HTML table."""

    start_url: str
    outcomes: list[ClickOutcome] = field(default_factory=list)
    load_findings: list[Finding] = field(default_factory=list)
    """What went wrong while the primary route loaded, before any click."""
    controls_found: int = 0
    left_over: int = 0
    """Distinct controls left unclicked by the budget, the depth or the deadline."""
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def counts(self) -> SweepCounts:
        """The per-element counts the grade is taken from."""
        clicked = [o for o in self.outcomes if not o.not_clicked]
        load_broken = any(f.kind in BROKEN for f in self.load_findings)
        return SweepCounts(
            clicked=len(clicked),
            broken=sum(1 for o in clicked if o.broken) + int(load_broken),
            console_errors=sum(1 for o in clicked if any(f.kind == "console-error" for f in o.findings))
            + int(any(f.kind == "console-error" for f in self.load_findings)),
            dead=sum(1 for o in clicked if any(f.kind == "dead" for f in o.findings)),
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (report.json's ``app_check.details``)."""
        return asdict(self)


class ClickableSweep:
    """One sweep in one browser (a ``SharedBrowser``: reset, deadlines and relaunch come from it)."""

    def __init__(
        self, browser: SharedBrowser, start_url: str, *, depth: int, budget: int, screenshots: Path | None = None,
        deadline_s: float = SWEEP_DEADLINE_S, settle_cap_s: float = SETTLE_CAP_S, call_timeout_s: float = CALL_TIMEOUT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.browser = browser
        self.start_url = start_url
        self.origin = origin_of(start_url)
        self.depth = depth
        self.budget = budget
        self.screenshots = screenshots
        self.deadline_s = deadline_s
        self.settle_cap_s = settle_cap_s
        self.call_timeout_s = call_timeout_s
        self.clock = clock
        self.report = SweepReport(start_url)
        self._script: str | None = None
        self._downloads = Path(tempfile.mkdtemp(prefix="backendbench-sweep-"))

    # --- the sweep ---------------------------------------------------------------------------

    def run(self) -> SweepReport:
        """Sweep the app; a primary route that hangs or never loads is a finding, a browser that fails is a ``BrowserError``."""
        started = self.clock()
        try:
            self._sweep(started)
        finally:
            self._forget_script()
            shutil.rmtree(self._downloads, ignore_errors=True)
            self.report.seconds = round(self.clock() - started, 2)
        return self.report

    def _sweep(self, started: float) -> None:
        from selenium.common.exceptions import TimeoutException

        try:
            first = self._fresh_page()
        except (BrowserHung, TimeoutException) as err:  # the primary route hangs or never loads: the candidate's
            self.report.load_findings = [Finding("hung", f"the primary route did not load: {error_first_line(err)}")]
            return
        self.report.load_findings = self._problems(first[1], self._state(), navigated=True)
        queue: deque[Control] = deque()
        seen: set[str] = set()
        self._enqueue(self._controls(()), queue, seen)
        while queue:
            if len(self.report.outcomes) >= self.budget:
                self.report.notes.append(f"stopped at the budget of {self.budget} clicks (--bench-sweep-budget)")
                break
            if self.clock() - started > self.deadline_s:
                self.report.notes.append(f"stopped at the sweep's deadline of {self.deadline_s:g} s")
                break
            control = queue.popleft()
            outcome, revealed = self._click_fresh(control)
            self.report.outcomes.append(outcome)
            if control.depth < self.depth:
                self._enqueue(revealed, queue, seen)
        self.report.left_over = len(queue)
        self.report.controls_found = len(seen)

    def _enqueue(self, controls: list[Control], queue: deque[Control], seen: set[str]) -> None:
        for control in controls:
            if control.signature not in seen:
                seen.add(control.signature)
                queue.append(control)

    def _click_fresh(self, control: Control) -> tuple[ClickOutcome, list[Control]]:
        """Reset, load, replay the path, click; never raises for what the page does."""
        outcome = ClickOutcome(control.selector, control.text, control.tag, control.depth)
        revealed: list[Control] = []
        try:
            self._fresh_page()
            for step in control.path:
                if not self._click_only(step):
                    outcome.not_clicked = f"the page no longer shows {step} on the way to it"
                    return outcome, revealed
            self._click_and_observe(control, outcome)
            if not outcome.broken and control.depth < self.depth and self._same_origin():
                revealed = self._controls((*control.path, control.selector))
        except BrowserHung as err:
            outcome.findings.append(Finding("hung", str(err)))
        except _driver_errors() as err:
            outcome.not_clicked = error_first_line(err)
        if outcome.findings and self.screenshots is not None and not any(f.kind == "hung" for f in outcome.findings):
            outcome.screenshot = self._screenshot(len(self.report.outcomes) + 1)
        return outcome, revealed

    def _click_and_observe(self, control: Control, outcome: ClickOutcome) -> None:
        driver = self.browser.driver
        element = self._call(lambda: driver.execute_script(FIND_AND_SCROLL, control.selector), "finding the control")
        if element is None:
            outcome.not_clicked = "the control was not found after a reload"
            return
        invalid_form = self._call(
            lambda: driver.execute_script("const e = arguments[0]; return !!(e.form && (e.type === 'submit' || e.type === 'image') && !e.form.checkValidity());", element),
            "reading the control's form",
        )
        before = self._state()
        handles = self._call(lambda: driver.window_handles, "listing windows")
        self._call(lambda: driver.get_log("browser"), "reading the console")  # what the load logged is not the click's
        downloads = set(self._downloads.iterdir())
        self._call(lambda: self._click(driver, element), f"clicking {control.selector}")
        dialogs = self._close_dialogs()
        outcome.settled = self._settle()
        after = self._state()
        logs = self._call(lambda: driver.get_log("browser"), "reading the console")
        outcome.effects = self._effects(before, after, dialogs, handles, downloads, invalid_form)
        outcome.findings = self._problems(logs, after, navigated=after.get("url") != before.get("url"))
        if not outcome.effects and not outcome.findings:
            outcome.findings.append(Finding("dead", "the click changed nothing: no DOM change, navigation, request, dialog, window or download"))
        if not outcome.settled:
            outcome.note = f"the page did not settle within {self.settle_cap_s:g} s after the click"

    def _click(self, driver: WebDriver, element: Any) -> None:
        from selenium.common.exceptions import ElementClickInterceptedException, ElementNotInteractableException

        try:
            element.click()
        except (ElementClickInterceptedException, ElementNotInteractableException):
            driver.execute_script("arguments[0].click();", element)  # covered or zero-size: a script click still runs its handlers

    def _click_only(self, selector: str) -> bool:
        driver = self.browser.driver
        element = self._call(lambda: driver.execute_script(FIND_AND_SCROLL, selector), "finding a control on the way")
        if element is None:
            return False
        self._call(lambda: self._click(driver, element), f"clicking {selector}")
        self._close_dialogs()
        self._settle()
        return True

    # --- page state ---------------------------------------------------------------------------

    def _fresh_page(self) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Reset the browser, register the recorder, open the primary route; returns its state and console."""
        self._forget_script()
        self.browser.reset(self.start_url)
        driver = self.browser.driver
        self._call(lambda: driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(self._downloads)}), "allowing downloads")
        added = self._call(lambda: driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER}), "registering the recorder")
        self._script = str(added["identifier"])
        self._call(lambda: driver.get(self.start_url), f"opening {self.start_url}", LOAD_TIMEOUT_S)
        self._settle()
        return self._state(), self._call(lambda: driver.get_log("browser"), "reading the console")

    def _forget_script(self) -> None:
        script, self._script = self._script, None
        if script is None or not self.browser.started or self.browser.hung:
            return  # never launch a browser just to clean up
        driver = self.browser.driver
        with contextlib.suppress(*_driver_errors()):
            self._call(lambda: driver.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script}), "removing the recorder")
            self._call(lambda: driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "default"}), "restoring downloads")

    def _state(self) -> dict[str, Any]:
        driver = self.browser.driver
        return dict(self._call(lambda: driver.execute_script(STATE), "reading the page's state") or {})

    def _settle(self) -> bool:
        """Wait until the DOM is quiet and no request pending (True), or give up at the cap (False).

        Quiet is counted from now at the earliest: what a click starts (a download) is given that
        long to show before the page counts as settled; a short timer it set (a delayed effect) is
        waited for up to SHORT_TIMER_S.
        """
        started = self.clock()
        deadline = started + self.settle_cap_s
        while True:
            self._close_dialogs()
            try:
                state = self._state()
            except _driver_errors() as err:
                if isinstance(err, BrowserHung):
                    raise
                state = {}
            waited = self.clock() - started
            quiet_s = min(float(state.get("quiet_ms", 0)) / 1000, waited)
            timers_done = not state.get("timers") or waited >= SHORT_TIMER_S  # a polling loop always has one
            if state.get("ready") == "complete" and quiet_s >= SETTLE_QUIET_S and not state.get("pending") and timers_done:
                return True
            if self.clock() >= deadline:
                return False
            time.sleep(0.05)

    def _close_dialogs(self) -> list[str]:
        """Accept alerts, confirms and prompts the page opened; returns their texts."""
        from selenium.common.exceptions import NoAlertPresentException

        driver = self.browser.driver
        texts = []
        for _ in range(5):
            try:
                alert = self._call(lambda: driver.switch_to.alert, "looking for a dialog")
                texts.append(str(self._call(lambda a=alert: a.text, "reading a dialog")))  # type: ignore[misc]
                self._call(alert.accept, "closing a dialog")
            except NoAlertPresentException:
                break
        return texts

    def _controls(self, path: tuple[str, ...]) -> list[Control]:
        driver = self.browser.driver
        found = self._call(lambda: driver.execute_script(CONTROLS), "listing the controls") or []
        return [Control(c["selector"], c["text"], c["tag"], c["signature"], path) for c in found if c.get("selector")]

    def _same_origin(self) -> bool:
        driver = self.browser.driver
        return origin_of(str(self._call(lambda: driver.current_url, "reading the URL"))) == self.origin

    def _effects(
        self, before: dict[str, Any], after: dict[str, Any], dialogs: list[str], handles: list[str], downloads: set[Path], invalid_form: bool,
    ) -> list[str]:
        driver = self.browser.driver
        effects = []
        if after.get("url") != before.get("url"):
            effects.append(f"navigation to {after.get('url')}")
        elif after.get("mutations") != before.get("mutations"):
            effects.append("DOM change")
        if after.get("url") == before.get("url") and after.get("requests") != before.get("requests"):
            effects.append("request")
        effects += [f"dialog: {text[:80]}" for text in dialogs]
        new = [h for h in self._call(lambda: driver.window_handles, "listing windows") if h not in handles]
        for handle in new:
            self._call(lambda h=handle: driver.switch_to.window(h), "switching to the new window")  # type: ignore[misc]
            url = self._call(lambda: driver.current_url, "reading the new window's URL")
            effects.append(f"new window: {url}")
            self._call(driver.close, "closing the new window")
        if new:
            self._call(lambda: driver.switch_to.window(handles[0]), "switching back")
        fresh = set(self._downloads.iterdir()) - downloads
        effects += [f"download: {p.name.removesuffix('.crdownload')}" for p in sorted(fresh)]
        if invalid_form:
            effects.append("the browser refused the form as invalid")
        return effects

    def _problems(self, logs: list[dict[str, Any]], state: dict[str, Any], navigated: bool) -> list[Finding]:
        """Findings from the console log and the page's state (an error page after a navigation)."""
        findings: list[Finding] = []
        for entry in logs:
            if entry.get("level") != "SEVERE":
                continue
            message = str(entry.get("message", ""))
            source = entry.get("source")
            status = _STATUS.search(message)
            if source == "network" and status:
                code = int(status.group(1))
                where = _URL.match(message)
                same_origin = where is not None and origin_of(where.group(1)) == self.origin
                if code >= 500 and same_origin:
                    findings.append(Finding("server-error", message))
                elif code >= 500 or code < 400:
                    findings.append(Finding("console-error", message))
                continue  # 4xx: answers an API gives on purpose (validation, not found)
            if source == "javascript" and "Uncaught" in message:
                findings.append(Finding("uncaught-error", message))
            else:
                findings.append(Finding("console-error", message))
        url = str(state.get("url") or "")
        status_code = state.get("status")
        if navigated and (url.startswith("chrome-error:") or (isinstance(status_code, int) and status_code >= 400)):
            findings.append(Finding("error-page", f"{url} answered {status_code}" if status_code else f"the browser showed an error page ({url})"))
        return findings

    def _screenshot(self, index: int) -> str | None:
        if self.screenshots is None:
            return None
        driver = self.browser.driver
        try:
            png = self._call(driver.get_screenshot_as_png, "taking a screenshot")
            self.screenshots.mkdir(parents=True, exist_ok=True)
            path = self.screenshots / f"sweep-{index:02d}.png"
            path.write_bytes(png)
        except _driver_errors():  # OSError among them
            return None
        return str(path)

    def _call(self, call: Callable[[], T], what: str, timeout_s: float | None = None) -> T:
        return self.browser.bounded(call, timeout_s or self.call_timeout_s, what)


def _driver_errors() -> tuple[type[BaseException], ...]:
    from selenium.common.exceptions import WebDriverException
    from urllib3.exceptions import HTTPError

    return (BrowserHung, WebDriverException, OSError, HTTPError)



