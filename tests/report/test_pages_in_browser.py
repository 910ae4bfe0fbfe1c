"""report.html, the leaderboard page and transcript.html as a person sees them: rendered by the
real Chromium at 1280 and 1920 px, checked for width and for what is above the fold, with a
screenshot of each kept (the ``screenshots`` fixture says where)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_backendbench.agents.transcript import render_transcript
from pytest_backendbench.cli.main import main as backendbench
from pytest_backendbench.report.html import HTML_NAME, write_html
from pytest_backendbench.report.tables import sr_line

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

Runs = list[tuple[str, dict[str, Any]]]
WIDTHS = (1280, 1920)
FOLD = 900

pytestmark = pytest.mark.browser

# every table outside a closed details element and a chart: (section id, right edge, page width)
TABLES_PAST_THE_EDGE = """
const width = document.documentElement.clientWidth;
return Array.from(document.querySelectorAll("table"))
  .filter(t => !t.closest("details:not([open])") && !t.closest("figure"))
  .map(t => [(t.closest("section") || document.body).id || t.id, t.getBoundingClientRect().right, width])
  .filter(([, right, width]) => right > width + 0.5);
"""


def long_values(runs: Runs) -> Runs:
    """The runs with BaxBench's per-CWE figures of a large run (30 CWEs) and long lists, as the
    bundled suite's run produced them, so the layout meets its worst case."""
    shaped = []
    for label, document in runs:
        document = copy.deepcopy(document)
        summary = document["summary"]
        cwes = [20, 22, 73, 78, 79, 89, 93, 94, 116, 117, 200, 203, 256, 269, 284, 285, 287, 307, 319, 345, 352, 400, 434, 502, 522, 601, 639, 703, 863, 915]
        summary["papers"]["baxbench"]["cwe_share"] = {f"CWE-{c}": (i + 1) / 31 for i, c in enumerate(cwes)}
        summary["papers"]["baxbench"]["insecure_rate"] = 0.25
        summary["security_failures_by_cwe"] = {f"CWE-{c}": i + 1 for i, c in enumerate(cwes)}
        summary["tasks_with_errors"] = [f"a-task-with-a-rather-long-identifier-{i}" for i in range(12)]
        shaped.append((label, document))
    return shaped


def look_at(driver: WebDriver, page: Path, name: str, screenshots: Path) -> list[Path]:
    """Open ``page`` at every width: no table past the page's edge, nothing scrolls sideways;
    a screenshot of the first screen at each width and of the whole page at 1280 px."""
    shots = []
    for width in WIDTHS:
        driver.set_window_size(width, FOLD)
        driver.get(page.as_uri())
        shots.append(screenshots / f"{name}-{width}.png")
        assert driver.save_screenshot(str(shots[-1]))
        sideways = driver.execute_script("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert sideways <= 0, f"{name} at {width} px scrolls {sideways} px sideways (see {shots[-1]})"
        assert driver.execute_script(TABLES_PAST_THE_EDGE) == [], f"{name} at {width} px: tables past the edge (see {shots[-1]})"
    driver.set_window_size(WIDTHS[0], FOLD)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(WIDTHS[0], min(int(height) + 120, 8000))
    shots.append(screenshots / f"{name}-{WIDTHS[0]}-full.png")
    assert driver.save_screenshot(str(shots[-1]))
    driver.set_window_size(WIDTHS[0], FOLD)
    assert [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")] == []
    return shots


def above_the_fold(driver: WebDriver, selector: str) -> bool:
    return bool(driver.execute_script(f"const r = document.querySelector({selector!r}).getBoundingClientRect(); return r.height > 0 && r.bottom <= window.innerHeight"))


def test_the_report_fits_at_1280_and_1920_px_with_its_headline_above_the_fold(
    chromium: WebDriver, real_reports: Runs, tmp_path: Path, screenshots: Path, request: pytest.FixtureRequest
) -> None:
    from selenium.webdriver.common.by import By

    page = write_html(tmp_path / HTML_NAME, long_values(real_reports))
    shots = look_at(chromium, page, "report", screenshots)
    chromium.get(page.as_uri())
    assert above_the_fold(chromium, "p.headline") and above_the_fold(chromium, "#overview table.figures thead")
    headlines = [e.text for e in chromium.find_elements(By.CSS_SELECTOR, "p.headline")]
    assert headlines == [f"{label}: {sr_line(document['summary'])}" for label, document in real_reports]
    # every value of the first table is on screen, none wider than its column allows
    cells = chromium.find_elements(By.CSS_SELECTOR, "#overview table.figures tbody td")
    assert cells and all(c.rect["x"] + c.rect["width"] <= 1280 for c in cells)
    # the long per-CWE list is a table of its own: one row per CWE, two columns per run
    rows = chromium.find_elements(By.CSS_SELECTOR, "#overview h3#cwes + p + div table tbody tr")
    assert len(rows) == 30 and rows[0].text.startswith("CWE-20")
    for shot in shots:
        request.node.user_properties.append(("screenshot", str(shot)))


def test_the_leaderboard_sorts_links_runs_and_failing_items_and_shows_paired_differences(
    chromium: WebDriver, real_reports: Runs, tmp_path: Path, screenshots: Path, request: pytest.FixtureRequest, capsys: pytest.CaptureFixture[str]
) -> None:
    from selenium.webdriver.common.by import By

    folders = []
    for label, document in real_reports:
        folder = tmp_path / label
        folder.mkdir()
        (folder / "report.json").write_text(json.dumps(document))
        write_html(folder / HTML_NAME, [(label, document)])
        folders.append(str(folder))
    assert backendbench(["report", "compare", *folders, "--out", str(tmp_path / "board")]) == 0
    capsys.readouterr()
    page = tmp_path / "board" / "leaderboard.html"
    shots = look_at(chromium, page, "leaderboard", screenshots)

    chromium.get(page.as_uri())
    assert above_the_fold(chromium, "#leaderboard-table tbody tr")

    def column(table: str, index: int) -> list[str]:
        return [row.find_elements(By.TAG_NAME, "td")[index].text for row in chromium.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")]

    header = [th.text for th in chromium.find_elements(By.CSS_SELECTOR, "#leaderboard-table th")]
    test_acc = header.index("Test.Acc")
    chromium.find_elements(By.CSS_SELECTOR, "#leaderboard-table th")[test_acc].click()
    ascending = column("leaderboard-table", test_acc)
    assert ascending == sorted(ascending, key=lambda text: float(text.rstrip("%")))
    chromium.find_elements(By.CSS_SELECTOR, "#leaderboard-table th")[0].click()
    assert column("leaderboard-table", 0) == sorted(label for label, _ in real_reports)

    # a run's name opens its own report
    links = {a.text: a.get_attribute("href") for a in chromium.find_elements(By.CSS_SELECTOR, "#leaderboard-table tbody td:first-child a")}
    assert links == {label: (tmp_path / label / HTML_NAME).as_uri() for label, _ in real_reports}
    # a task's failing count opens that run's failing items, unfolded
    failing = chromium.find_element(By.CSS_SELECTOR, "#tasks-table a[href='#run-2-task-notes']")
    assert failing.text == "1 failing"
    failing.click()
    target = chromium.find_element(By.ID, "run-2-task-notes")
    assert target.is_displayed() and "test_" in target.text
    missing = chromium.find_element(By.CSS_SELECTOR, "#tasks-table a[href='#run-2-task-notes2']")
    assert missing.text.endswith("(missing)")
    # the paired differences against the first run, beside the leaderboard
    paired = chromium.find_elements(By.CSS_SELECTOR, "#paired tbody tr")
    assert len(paired) == 2 and all("p = " in row.text for row in paired)
    for shot in shots:
        request.node.user_properties.append(("screenshot", str(shot)))


def test_a_transcript_with_long_commands_and_outputs_fits(chromium: WebDriver, tmp_path: Path, screenshots: Path, request: pytest.FixtureRequest) -> None:
    long_line = "python -c 'print(" + "x" * 3000 + ")'"
    events = [
        {"type": "message", "t": 0.0, "role": "system", "content": "You are a careful engineer. " * 40},
        {"type": "model", "t": 1.2, "step": 1, "content": "", "tool_calls": [{"name": "bash", "arguments": json.dumps({"command": long_line})}], "tokens_in": 900, "tokens_out": 80, "cost_usd": 0.001},
        {"type": "action", "t": 2.5, "step": 1, "action": "bash", "command": long_line, "exit_code": 0, "seconds": 0.4, "observation": "y" * 5000},
        {"type": "verify", "t": 3.0, "step": 2, "observation": "SELF_VERIFY_FAIL\nPhase: tests"},
        {"type": "end", "t": 3.1, "reason": "submitted"},
    ]
    page = tmp_path / "transcript.html"
    page.write_text(render_transcript(events, "notes@sample-1"), encoding="utf-8")
    shots = look_at(chromium, page, "transcript", screenshots)
    chromium.get(page.as_uri())
    assert above_the_fold(chromium, "h1")
    for shot in shots:
        request.node.user_properties.append(("screenshot", str(shot)))
