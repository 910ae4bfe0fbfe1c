"""One full-page screenshot of a candidate's primary route, kept in the run's report folder.

``--bench-page-screenshot`` (off by default: it costs a browser session per candidate) makes the
smoke item of every task with a browser UI (``kind: fullstack`` or ``frontend``) open the
primary route in a session of the worker's scenario pool, as a scenario would (the task's locale,
seed, offline CDN, deadline and hang watch), and save the whole page, up to
``MAX_HEIGHT`` pixels tall, as ``artifacts/<candidate>/page.png``. The smoke item's result
names it (``artifacts.screenshot``, relative to the report folder); ``backendbench report compare
--visual`` shows these pages to a judge model (judges/visual_pairwise.py).
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import HarnessError

if TYPE_CHECKING:
    from ..taskrun import TaskRun

PAGE_SCREENSHOT_NAME = "page.png"
MAX_HEIGHT = 8000
"""Taller pages are cut here: a judge model reads no more, and the file stays small."""
SETTLE_S = 1.0
"""After the load event, time for the page's scripts to draw what they fetch."""
DEADLINE_S = 60.0
UI_KINDS = ("fullstack", "frontend")


class PageScreenshotError(HarnessError):
    """The primary route could not be photographed: the run keeps no page (not the candidate's fault)."""


def wanted(config: pytest.Config, run: TaskRun) -> bool:
    """Whether this run's smoke item keeps a screenshot (the option is on and the task has a page)."""
    from ..config import bench_config

    return bool(bench_config(config).page_screenshot) and run.task.kind in UI_KINDS


def full_page_png(driver: Any, url: str, *, max_height: int = MAX_HEIGHT, settle_s: float = SETTLE_S) -> bytes:
    """Open ``url`` and photograph the whole page (DevTools' captureBeyondViewport), as PNG bytes."""
    import time

    driver.get(url)
    time.sleep(settle_s)
    metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
    size = metrics.get("cssContentSize") or metrics.get("contentSize") or {}
    width = max(1, int(size.get("width", 1280)))
    height = max(1, min(int(size.get("height", 1024)), max_height))
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {"format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}},
    )
    return base64.b64decode(shot["data"])


def keep_page_screenshot(item: pytest.Item, run: TaskRun, base_url: str) -> str:
    """Photograph the run's primary route in a pool session; returns the path relative to the report folder."""
    from ..config import bench_config
    from ..taskrun import artifact_dir_for, registry_of
    from .browser.page_random import scenario_seed_key
    from .scenarios.behave_runner import SleepPolicy
    from .scheduling.pool import ScenarioWork
    from .scheduling.worker_pool import pool_of
    from .settings import browser_locale

    url = base_url.rstrip("/") + run.task.primary_route
    shots: list[bytes] = []
    service: Any = run.service
    work = ScenarioWork(
        feature=run.task.task_yaml, line=0, step_modules=(), base_url=base_url, entry_url=url, environment=None,
        sleep=SleepPolicy.real(), locale=browser_locale(item.config, run.task),
        app_dir=getattr(service, "app_dir", None), entry_file=getattr(service, "entry_file", None),
        random_seed_key=scenario_seed_key(bench_config(item.config).bdd_seed, run.task.id, 0, "page-screenshot", 0),
        drive=lambda driver: shots.append(full_page_png(driver, url)), timeout_s=DEADLINE_S,
    )
    pool = pool_of(item.config)
    key = f"{item.nodeid}::page-screenshot"
    pool.submit(key, work)
    job = pool.take(key)
    if job.timed_out or job.hung is not None:
        raise PageScreenshotError(f"the primary route {run.task.primary_route} could not be photographed: {job.hung or f'still loading after {DEADLINE_S:g} s'}")
    if job.error is not None or not shots:
        raise PageScreenshotError(f"the primary route {run.task.primary_route} could not be photographed: {job.error or 'no image'}") from job.error
    path = artifact_dir_for(item) / PAGE_SCREENSHOT_NAME
    path.write_bytes(shots[0])
    try:
        return str(path.relative_to(Path(registry_of(item.config).artifacts_dir).parent))  # the report folder
    except ValueError:
        return str(path)


def record_page_screenshot(item: pytest.Item, run: TaskRun, base_url: str) -> None:
    """The smoke item's part: keep the screenshot when asked; a failure is noted, never the smoke item's verdict."""
    if not wanted(item.config, run):
        return
    try:
        item.user_properties.append(("screenshot", keep_page_screenshot(item, run, base_url)))
    except PageScreenshotError as err:
        item.add_report_section("call", "page screenshot", f"not kept: {err}")
