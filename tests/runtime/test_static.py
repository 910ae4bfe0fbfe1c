"""Static frontend candidates: the entry page rule, the served folder and the build error without HTML."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from pytest_backendbench.candidates import Candidate
from pytest_backendbench.errors import BuildFailure
from pytest_backendbench.runtime.static import StaticSiteRuntime, StaticSiteService, find_entry_page


def fetch(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read().decode()


def write(root: Path, relative: str, text: str) -> None:
    (root / relative).parent.mkdir(parents=True, exist_ok=True)
    (root / relative).write_text(text)


def test_an_entry_page_in_a_subfolder_is_the_base_url_and_its_parent_is_served(tmp_path: Path) -> None:
    write(tmp_path, "planner/main.html", "<h1>planner</h1>")
    write(tmp_path, "planner/js/app.js", "var app = 1;")
    write(tmp_path, "shared/theme.css", "body {}")
    entry = find_entry_page(tmp_path)
    assert entry == tmp_path / "planner" / "main.html"
    service = StaticSiteService(tmp_path, entry)
    try:
        assert service.base_url.endswith("/planner") and service.app_dir == (tmp_path / "planner").resolve()
        assert fetch(service.base_url + "/") == (200, "<h1>planner</h1>")  # the folder answers its entry page
        assert fetch(service.base_url + "/?tab=2") == (200, "<h1>planner</h1>")
        assert fetch(service.base_url + "/js/app.js") == (200, "var app = 1;")
        assert fetch(service.base_url + "/../shared/theme.css")[1] == "body {}"  # ../ works as from disk
    finally:
        service.stop()


def test_a_candidate_without_any_html_fails_its_build_with_the_reason(tmp_path: Path) -> None:
    write(tmp_path, "app/script.js", "")
    write(tmp_path, "node_modules/pkg/index.html", "")  # dependencies are never the app
    with pytest.raises(BuildFailure, match="needs an HTML page") as info:
        StaticSiteRuntime().build(Candidate(task_id="site", path=tmp_path), None)  # type: ignore[arg-type]
    assert "no .html file in" in info.value.detail and "node_modules" in info.value.detail
