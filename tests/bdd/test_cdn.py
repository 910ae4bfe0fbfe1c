"""The offline CDN shim: URL shapes, the npm cache, and a page loading one library per CDN in Chromium.

The machine has no internet (only the package registries), so a library that loads in the
browser test came from the shim; the SRI hashes in tests/bdd/data/cdn/index.html are the
ones the CDNs publish, so a byte that differs from the published file fails the test.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser
from pytest_backendbench.bdd.cdn.server import FontsCss, NpmCache, PackageFile, PackageUnavailable, cdn_flags, map_cdn_url
from pytest_backendbench.errors import HarnessError
from pytest_backendbench.importers import import_e2edev

from .conftest import DATA, StaticServer

CDN_PAGE = DATA / "cdn"


@pytest.mark.parametrize(
    ("host", "path", "expected"),
    [
        ("cdn.jsdelivr.net", "/npm/bootstrap@5.1.3/dist/css/bootstrap.min.css", PackageFile("bootstrap", "5.1.3", ("dist/css/bootstrap.min.css",))),
        ("cdn.jsdelivr.net", "/npm/chart.js", PackageFile("chart.js", "", ())),
        ("cdn.jsdelivr.net", "/npm/@popperjs/core@2/dist/umd/popper.min.js", PackageFile("@popperjs/core", "2", ("dist/umd/popper.min.js",))),
        ("unpkg.com", "/marked@4.0.2/marked.min.js?module", PackageFile("marked", "4.0.2", ("marked.min.js",))),
        ("code.jquery.com", "/jquery-3.5.1.slim.min.js", PackageFile("jquery", "3.5.1", ("dist/jquery.slim.min.js",))),
        ("code.jquery.com", "/jquery-2.2.4.js", PackageFile("jquery", "2.2.4", ("dist/jquery.js",))),
        ("stackpath.bootstrapcdn.com", "/bootstrap/4.6.0/js/bootstrap.min.js", PackageFile("bootstrap", "4.6.0", tuple(f + "js/bootstrap.min.js" for f in ("", "dist/", "dist/umd/", "umd/", "build/", "lib/")))),
        ("fonts.googleapis.com", "/css?family=Open+Sans:400,700|Lato", FontsCss(("Open Sans", "Lato"))),
        ("fonts.googleapis.com", "/css2?family=Roboto:wght@400;700&family=Inter", FontsCss(("Roboto", "Inter"))),
        ("cdn.jsdelivr.net", "/gh/user/repo@1.0/x.js", None),
        ("example.com", "/jquery.js", None),
    ],
)
def test_cdn_urls_map_to_npm_files(host: str, path: str, expected: object) -> None:
    assert map_cdn_url(host, path) == expected


def test_cdnjs_names_map_to_npm_packages_by_major_version() -> None:
    def package(path: str) -> str:
        mapped = map_cdn_url("cdnjs.cloudflare.com", path)
        assert isinstance(mapped, PackageFile)
        return mapped.package

    assert package("/ajax/libs/font-awesome/5.15.4/css/all.min.css") == "@fortawesome/fontawesome-free"
    assert package("/ajax/libs/font-awesome/4.7.0/css/font-awesome.min.css") == "font-awesome"
    assert package("/ajax/libs/popper.js/1.16.1/umd/popper.min.js") == "popper.js"
    assert package("/ajax/libs/popper.js/2.11.8/umd/popper.min.js") == "@popperjs/core"
    assert package("/ajax/libs/twitter-bootstrap/4.6.2/css/bootstrap.min.css") == "bootstrap"
    assert package("/ajax/libs/Chart.js/3.9.1/chart.min.js") == "chart.js"


def test_an_unknown_mode_is_refused_and_off_makes_cdn_hosts_unresolvable() -> None:
    with pytest.raises(HarnessError, match="--bench-cdn='nope': expected one of offline, live, off"):
        cdn_flags("nope", None)
    (rules,) = cdn_flags("off", None)
    assert "MAP code.jquery.com ~NOTFOUND" in rules and "MAP cdn.jsdelivr.net ~NOTFOUND" in rules
    assert cdn_flags("live", None) == []


def test_latest_is_pinned_once_and_a_missing_version_is_unavailable(tmp_path: Path) -> None:
    cache = NpmCache(tmp_path)
    version = cache.resolve("marked", "latest")
    assert cache.pins == {"marked@latest": version}
    (tmp_path / "pins.json").write_text('{"marked@latest": "4.0.2"}')
    assert cache.resolve("marked", "") == "4.0.2"  # the pin wins over the registry's newer latest
    assert cache.file(PackageFile("marked", "", ("marked.min.js",))).name == "marked.min.js"
    with pytest.raises(PackageUnavailable, match="answered 404"):
        cache.file(PackageFile("marked", "0.0.999", ("marked.min.js",)))


@pytest.fixture(scope="module")
def cdn_page(serve: Callable[[Path], StaticServer]) -> StaticServer:
    return serve(CDN_PAGE)


@pytest.fixture(scope="module")
def cdn_off_browser() -> Iterator[SharedBrowser]:
    browser = SharedBrowser(BrowserOptions(cdn="off"))
    yield browser
    browser.close()


def _wait_for(driver: object, script: str, timeout: float = 20.0) -> object:
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = driver.execute_script(script)  # type: ignore[attr-defined]
        if value:
            return value
        time.sleep(0.1)
    return value


@pytest.mark.browser
def test_one_library_from_each_cdn_loads_offline_with_sri(session_browser: SharedBrowser, cdn_page: StaticServer) -> None:
    session_browser.reset(cdn_page.base_url)
    driver = session_browser.driver
    driver.get(cdn_page.base_url + "/index.html")
    assert _wait_for(driver, "return document.readyState === 'complete'")
    assert driver.execute_script("return window.jQuery && window.jQuery.fn.jquery") == "3.6.0"  # code.jquery.com, SRI
    assert driver.execute_script("return typeof bootstrap !== 'undefined' && typeof bootstrap.Modal") == "function"  # jsdelivr, SRI
    assert driver.execute_script("return getComputedStyle(document.getElementById('hidden')).display") == "none"  # jsdelivr css, SRI
    assert driver.execute_script("return marked.parse('# hi').trim()") == '<h1 id="hi">hi</h1>'  # unpkg
    assert driver.execute_script("return typeof Chart === 'function' && typeof Chart.helpers") == "object"  # cdnjs over plain http
    icon_font = driver.execute_script("return getComputedStyle(document.getElementById('icon'), '::before').fontFamily")
    assert "Font Awesome 5 Free" in icon_font  # cdnjs css, SRI
    assert _wait_for(driver, "return document.fonts.check('900 16px \"Font Awesome 5 Free\"')"), "the webfont (a relative URL of the cdnjs css) did not load"
    rules = driver.execute_script("return Array.from(document.getElementById('fonts').sheet.cssRules).map(r => r.cssText).join('\\n')")
    assert "font-family: Roboto" in rules and "font-family: \"Open Sans\"" in rules  # Google Fonts, answered with local fallbacks
    missing = _wait_for(driver, "return window.missing !== 'pending' && window.missing")
    assert str(missing).startswith("failed after"), missing  # unknown CDN URLs fail fast
    assert int(str(missing).split()[2]) < 5000
    server = session_browser.cdn_server
    assert server is not None and any("/gh/nobody" in line and "404" in line for line in server.log_lines)


@pytest.mark.browser
def test_cdn_off_leaves_the_libraries_out_and_fails_fast(cdn_off_browser: SharedBrowser, cdn_page: StaticServer) -> None:
    cdn_off_browser.reset(cdn_page.base_url)
    driver = cdn_off_browser.driver
    started = time.monotonic()
    driver.get(cdn_page.base_url + "/index.html")
    assert time.monotonic() - started < 10
    assert driver.execute_script("return typeof window.jQuery") == "undefined"
    assert cdn_off_browser.cdn_server is None


MANIFEST_PAGES = {
    # an unversioned URL: the shim picks the version (pinned) and the manifest must say which
    "01": ('<script src="https://cdn.jsdelivr.net/npm/chart.js"></script>', "typeof Chart === 'function'"),
    "02": ('<script src="https://code.jquery.com/jquery-3.6.0.min.js"></script>', "window.jQuery.fn.jquery === '3.6.0'"),
}
MANIFEST_STEPS = '''from behave import given, then
from selenium import webdriver

@given("the page is open")
def step_open(context):
    context.driver = webdriver.Chrome()
    context.driver.get("file:///somewhere/index.html")

@then("the library is loaded")
def step_loaded(context):
    assert context.driver.execute_script("return {check}")
'''


def _write_cdn_projects(data: Path) -> None:
    """Two E2EDev-format projects, each loading one library from a CDN (for two xdist workers)."""
    for number, (tag, check) in MANIFEST_PAGES.items():
        project = data / f"E2ESD_Bench_{number}"
        (project / "source_projcet").mkdir(parents=True)
        (project / "source_projcet" / "index.html").write_text(f"<!DOCTYPE html><html><head>{tag}</head><body><p>lib</p></body></html>")
        (project / "prompt.txt").write_text("A page that loads a library from a CDN.\n")
        case = {"test_case": ["Feature: library\n\n  Scenario: [Normal] The library loads\n    Given the page is open\n    Then the library is loaded\n"],
                "step_code": MANIFEST_STEPS.replace("{check}", check)}
        tests = {"summary": {"overview": "A CDN page."}, "finegrained_rewith_test": {"1": {"requirement": {"description": "loads"}, "test_cases": [case]}}}
        (project / "requirment_with_tests.json").write_text(json.dumps(tests))


@pytest.mark.browser
@pytest.mark.slow
def test_the_versions_the_offline_cdn_served_reach_the_manifest_from_every_worker(
    pytester: pytest.Pytester, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BACKENDBENCH_CACHE", str(shared_cache))
    _write_cdn_projects(pytester.path / "source")
    summary = import_e2edev(pytester.path / "source", pytester.path)
    for task in summary.tasks:
        shutil.copytree(task.oracle_dir / "reference", pytester.path / "candidates" / task.id)

    result = pytester.runpytest(
        f"--candidate={pytester.path / 'candidates'}", "--bench-runtime=process", "-n", "2", "--dist=loadgroup",
        "--bench-report-dir=out", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(passed=2 * 3 + 2)
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    packages = {entry["package"]: entry for entry in report["manifest"]["cdn_packages"]}
    chart = packages["chart.js"]
    assert chart["requested"] == "" and chart["pinned"] is True and chart["url"] == "https://cdn.jsdelivr.net/npm/chart.js"
    assert re.fullmatch(r"\d+\.\d+\.\d+", chart["version"]) and NpmCache(shared_cache / "cdn").pins["chart.js@latest"] == chart["version"]
    assert packages["jquery"] == {
        "package": "jquery", "requested": "3.6.0", "version": "3.6.0", "pinned": False, "url": "https://code.jquery.com/jquery-3.6.0.min.js",
    }
    summary_md = (pytester.path / "out" / "summary.md").read_text()
    assert f"| chart.js | {chart['version']} | (no version) (pinned) | `https://cdn.jsdelivr.net/npm/chart.js` |" in summary_md
    assert "CDN package version(s) served offline, 1 pinned here" in (pytester.path / "out" / "report.html").read_text()


@pytest.mark.parametrize(
    ("host", "path", "package", "version", "first_path"),
    [
        ("ajax.googleapis.com", "/ajax/libs/jquery/2.2.4/jquery.min.js", "jquery", "2.2.4", "jquery.min.js"),
        ("ajax.googleapis.com", "/ajax/libs/jqueryui/1.12.1/jquery-ui.min.js", "jquery-ui", "1.12.1", "jquery-ui.min.js"),
        ("maxcdn.bootstrapcdn.com", "/bootstrap/4.0.0-alpha.6/css/bootstrap.min.css", "bootstrap", "4.0.0-alpha.6", "css/bootstrap.min.css"),
        ("cdnjs.cloudflare.com", "/ajax/libs/modernizr/2.8.3/modernizr.js", "npm-modernizr", "2.8.3", "modernizr.js"),
        ("cdnjs.cloudflare.com", "/ajax/libs/modernizr/3.6.0/modernizr.min.js", "modernizr", "3.6.0", "modernizr.min.js"),
    ],
)
def test_google_hosted_libraries_pre_releases_and_modernizr_2_are_mapped(host: str, path: str, package: str, version: str, first_path: str) -> None:
    mapped = map_cdn_url(host, path)
    assert isinstance(mapped, PackageFile)
    assert (mapped.package, mapped.version, mapped.paths[0]) == (package, version, first_path)


def _fake_package(root: Path, files: dict[str, bytes]) -> NpmCache:
    folder = root / "lib" / "1.0.0"
    for name, data in {"package.json": b'{"name": "lib"}', **files}.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return NpmCache(root, registry="http://127.0.0.1:9")  # never asked: the version is exact and unpacked


def _sri(data: bytes, algorithm: str = "sha384") -> str:
    import base64
    import hashlib

    return f"{algorithm}-" + base64.b64encode(hashlib.new(algorithm, data).digest()).decode()


def test_a_page_s_sri_hash_picks_the_package_file_whose_bytes_match(tmp_path: Path) -> None:
    cache = _fake_package(tmp_path, {"lib.min.js": b"npm's build", "dist/cdn/lib.min.js": b"the CDN's build", "dist/other.js": b"x"})
    request = PackageFile("lib", "1.0.0", ("lib.min.js",))
    assert cache.locate(request)[0].read_bytes() == b"npm's build"
    assert cache.locate(request, _sri(b"the CDN's build"))[0].read_bytes() == b"the CDN's build"
    assert cache.locate(request, f"sha256-bogus {_sri(b'the CDN s build')} {_sri(b'x', 'sha512')}")[0].name == "other.js"
    # no file has the hash: the named file is served (the browser refuses it and says so in the console)
    assert cache.locate(request, _sri(b"nobody's build"))[0].read_bytes() == b"npm's build"


def test_the_cdn_server_learns_the_sri_hashes_of_a_static_site(tmp_path: Path) -> None:
    from pytest_backendbench.bdd.cdn.server import CdnServer

    (tmp_path / "site" / "sub").mkdir(parents=True)
    (tmp_path / "site" / "sub" / "index.html").write_text(
        '<script crossorigin="anonymous" integrity="sha512-abc" src="https://cdnjs.cloudflare.com/ajax/libs/marked/1.2.7/marked.min.js"></script>\n'
        "<link href='//maxcdn.bootstrapcdn.com/bootstrap/4.0.0-alpha.6/css/bootstrap.min.css' rel=stylesheet integrity='sha384-def'>"
    )
    server = CdnServer(NpmCache(tmp_path / "cache"))
    try:
        server.learn_integrity(tmp_path / "site")
        assert server.integrity_for("https://cdnjs.cloudflare.com/ajax/libs/marked/1.2.7/marked.min.js") == "sha512-abc"
        assert server.integrity_for("https://maxcdn.bootstrapcdn.com/bootstrap/4.0.0-alpha.6/css/bootstrap.min.css") == "sha384-def"
        assert server.integrity_for("https://cdnjs.cloudflare.com/ajax/libs/other/1/x.js") is None
    finally:
        server.close()
