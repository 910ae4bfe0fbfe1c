"""The HTML report: self-contained, charts that match the documents, and a clean render in Chromium."""

from __future__ import annotations

import copy
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_backendbench.report.html import HTML_NAME, heat_colour, nice_ticks, render_html, write_html
from pytest_backendbench.report.markdown import render_markdown
from pytest_backendbench.report.tables import cwe_table, summary_rows

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

Runs = list[tuple[str, dict[str, Any]]]


class Elements(HTMLParser):
    """Every start tag with its attributes, and whether the page would fetch anything."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def having(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and (cls is None or cls in a.get("class", "").split())]


def test_the_page_is_self_contained(real_reports: Runs) -> None:
    page = render_html(real_reports)
    elements = Elements(page)
    assert not elements.having("script") and not elements.having("img") and not elements.having("iframe")
    for tag, attrs in elements.tags:
        for name in ("src", "href"):
            if name in attrs:
                assert attrs[name].startswith(("data:", "#")), f"<{tag} {name}={attrs[name]!r}> fetches something"
    assert "url(#heat-scale)" in page and not re.search(r"url\((?!#)", page)
    assert "@import" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")


def test_the_charts_and_tables_match_the_documents(real_reports: Runs) -> None:
    elements = Elements(render_html(real_reports))
    charts = {a["class"].split()[1] for a in elements.having("svg", "chart")}
    assert charts == {"chart-failures", "chart-attrition", "chart-heatmap"}

    categories = sorted({c for _, d in real_reports for c in d["summary"]["failures_by_category"]})
    assert categories == ["authorization", "validation"]
    bars = elements.having("rect", "bar")
    assert len(bars) == len(categories) * len(real_reports)
    assert {(b["data-run"], b["data-category"]) for b in bars} == {(label, c) for label, _ in real_reports for c in categories}

    assert len(elements.having("polyline", "series")) == 3  # base -> r1 for each run
    assert len(elements.having("circle", "point")) == 6

    cells = {(c["data-task"], c["data-run"]): c["fill"] for c in elements.having("rect", "cell") if "data-task" in c}
    assert set(cells) == {(t, label) for t in ("notes", "notes2") for label, _ in real_reports}
    assert cells[("notes", "model-good")] == heat_colour(1.0)
    assert cells[("notes", "model-flawed")] == heat_colour(0.75)
    assert cells[("notes2", "model-flawed")] == heat_colour(0.0)  # missing: counted, as failed

    page = render_html(real_reports)
    assert "✗ missing" in page and "1/3 ✓" in page
    assert "model-flawed: 1 missing; model-sampled: 2 failed to build." in page
    assert page.count("no usable answer in 3 attempts") == 2  # the generation errors of notes and notes2 sample-3
    assert page.count('<section class="run"') == 3
    assert "notes@sample-2" in page and "pass@k" in page and "@1: 33.3%, @2: 66.7%, @3: 100.0%" in page


def test_labels_are_escaped_and_degenerate_inputs_render(real_reports: Runs) -> None:
    _, document = real_reports[0]
    page = render_html([("<b>model & co</b>", document)])
    assert "<b>model" not in page and "&lt;b&gt;model &amp; co&lt;/b&gt;" in page
    assert "no oracle item failed in any run" in page
    assert "No reports to show." in render_html([])


def test_write_html_creates_the_folder(real_reports: Runs, tmp_path: Path) -> None:
    path = write_html(tmp_path / "deep" / HTML_NAME, real_reports)
    assert path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_scales() -> None:
    assert nice_ticks(0) == [0.0, 1.0]
    assert nice_ticks(7) == [0, 2, 4, 6, 8]
    assert nice_ticks(230)[-1] == 250
    assert (heat_colour(0.0), heat_colour(1.0), heat_colour(-1), heat_colour(2)) == ("#d73027", "#1a9850", "#d73027", "#1a9850")


@pytest.mark.browser
def test_the_report_renders_in_headless_chromium(
    chromium: WebDriver, real_reports: Runs, tmp_path: Path, screenshots: Path, request: pytest.FixtureRequest
) -> None:
    from selenium.webdriver.common.by import By

    page = write_html(tmp_path / HTML_NAME, real_reports)
    screenshot = screenshots / "report-charts.png"
    driver = chromium
    driver.set_window_size(1280, 900)
    driver.get(page.as_uri())
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1280, min(int(height) + 120, 8000))  # the whole page in one screenshot
    assert driver.save_screenshot(str(screenshot))
    for name in ("failures", "attrition", "heatmap"):
        chart = driver.find_element(By.CSS_SELECTOR, f"#chart-{name} svg.chart-{name}")
        assert chart.size["width"] > 300 and chart.size["height"] > 100, name
    bars = driver.find_elements(By.CSS_SELECTOR, "svg.chart-failures rect.bar")
    assert len(bars) == 6 and max(b.size["height"] for b in bars) > 50
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.chart-attrition polyline.series")) == 3
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.chart-heatmap rect.cell")) == 6
    assert driver.find_element(By.CSS_SELECTOR, "#run-3 h2").text.endswith("model-sampled")
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0
    console = driver.get_log("browser")
    assert [e for e in console if e["level"] in ("SEVERE", "WARNING")] == []
    driver.set_window_size(1280, 900)
    assert screenshot.stat().st_size > 20_000
    request.node.user_properties.append(("screenshot", str(screenshot)))


def test_the_per_cwe_shares_are_a_table_of_their_own_and_long_values_fold(real_reports: Runs) -> None:
    label, document = real_reports[0]
    document = copy.deepcopy(document)
    document["summary"]["papers"]["baxbench"].update(cwe_share={"CWE-89": 0.5, "CWE-22": 0.25}, insecure_rate=0.5)
    document["summary"]["security_failures_by_cwe"] = {"CWE-89": 2}
    document["summary"]["tasks_with_errors"] = [f"task-{i:02d}" for i in range(20)]
    assert cwe_table([(label, document)]) == (["CWE", label], [["CWE-22", "25.0% (0)"], ["CWE-89", "50.0% (2)"]])
    assert ("BaxBench insecure rate (of correct samples)", "50.0%, 2 CWEs exhibited") in summary_rows(document)
    assert "| CWE-89 | 50.0% (2) |" in render_markdown(document)
    page = render_html([(label, document)])
    assert '<h3 id="cwes">' in page and "<td>CWE-89</td><td>50.0% (2)</td>" in page
    assert "<details><summary>task-00, task-01" in page  # 20 task ids fold, the table keeps its width
