"""What a page cannot make flip between runs: Math.random (--bench-bdd-seed), remote hosts (--bench-remote-hosts)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_backendbench.bdd.browser.page_random import parse_seed, scenario_seed_key
from pytest_backendbench.bdd.browser.remote_hosts import RefusingPort, bypass_hosts, remote_host_flags
from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser
from pytest_backendbench.bdd.cdn.urls import CDN_HOSTS
from pytest_backendbench.errors import HarnessError

from .conftest import StaticServer, write_static_bench

DRAWS_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>Draws</title></head>
<body><p id="draws"></p>
<script>document.getElementById("draws").textContent = JSON.stringify([Math.random(), Math.random(), Math.random()]);</script>
</body></html>
"""


def _draws(driver: object, url: str) -> list[float]:
    driver.get(url)  # type: ignore[attr-defined]
    return json.loads(driver.find_element("id", "draws").text)  # type: ignore[attr-defined,no-any-return]


@pytest.fixture
def two_origins(tmp_path: Path, serve: Callable[[Path], StaticServer]) -> tuple[StaticServer, StaticServer]:
    """The same page served on two ports, as one candidate is in two runs."""
    (tmp_path / "index.html").write_text(DRAWS_PAGE)
    return serve(tmp_path), StaticServer(tmp_path)


def test_the_seed_key_holds_nothing_that_changes_between_runs() -> None:
    key = scenario_seed_key("0", "todo-app", 0, "add.feature", 12)
    assert key == "0|todo-app|0|add.feature|12"
    assert scenario_seed_key("0", "todo-app", 2, "add.feature", 12) != key  # repeats draw differently
    assert scenario_seed_key("7", "todo-app", 0, "add.feature", 12) != key
    assert scenario_seed_key("off", "todo-app", 0, "add.feature", 12) is None
    assert parse_seed(" OFF ") == "off" and parse_seed("42") == "42"
    for bad in ("-1", "1.5", "random", ""):
        with pytest.raises(ValueError):
            parse_seed(bad)


@pytest.mark.browser
def test_a_seeded_page_draws_the_same_numbers_whatever_its_port_or_what_ran_before(
    session_browser: SharedBrowser, two_origins: tuple[StaticServer, StaticServer]
) -> None:
    first, second = two_origins
    try:
        session_browser.reset(first.base_url, "0|draws|0|a.feature|3")
        drawn = _draws(session_browser.driver, first.base_url + "/")
        session_browser.driver.refresh()
        reloaded = json.loads(session_browser.driver.find_element("id", "draws").text)
        assert all(0 <= x < 1 for x in drawn) and len(set(drawn)) == 3
        assert reloaded != drawn  # a reload is another document: it draws on, not again

        session_browser.reset(second.base_url, "0|draws|0|b.feature|3")
        other_scenario = _draws(session_browser.driver, second.base_url + "/")
        assert other_scenario != drawn

        session_browser.reset(second.base_url, "0|draws|0|a.feature|3")  # same scenario, another port, after another one
        assert _draws(session_browser.driver, second.base_url + "/") == drawn

        session_browser.reset(first.base_url, None)
        unseeded = [_draws(session_browser.driver, first.base_url + "/") for _ in range(2)]
        assert unseeded[0] != unseeded[1] and drawn not in unseeded  # off: the browser's own generator again
    finally:
        second.close()


@pytest.mark.browser
def test_seeded_draws_are_uniform_in_the_unit_interval(session_browser: SharedBrowser, todo_app: StaticServer) -> None:
    session_browser.reset(todo_app.base_url, "0|uniform|0|u.feature|1")
    session_browser.driver.get(todo_app.base_url + "/")
    draws = session_browser.driver.execute_script("return Array.from({length: 20000}, () => Math.random())")
    assert min(draws) >= 0 and max(draws) < 1
    tenths = [0] * 10
    for x in draws:
        tenths[int(x * 10)] += 1
    assert all(1800 < n < 2200 for n in tenths), tenths  # ~2,000 each; 4.5 standard deviations of slack
    assert len(set(draws)) > 19990


def test_remote_hosts_off_sends_all_but_local_networks_and_cdns_to_a_refusing_port(monkeypatch: pytest.MonkeyPatch) -> None:
    assert remote_host_flags("live", None) == []
    refusing = RefusingPort()
    try:
        proxy, bypass = remote_host_flags("off", refusing, docker_host="ssh://builder@box.example.org")
        assert proxy == f"--proxy-server=http://127.0.0.1:{refusing.port}"
        listed = bypass.removeprefix("--proxy-bypass-list=").split(";")
        for host in ("127.0.0.0/8", "172.16.0.0/12", "10.0.0.0/8", "192.168.0.0/16", "[::1]", "localhost", "<local>", "box.example.org", *CDN_HOSTS):
            assert host in listed
        assert "box.example.org" not in bypass_hosts(docker_host="unix:///var/run/docker.sock")
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", refusing.port), timeout=5):
            pass
    finally:
        refusing.close()
    with pytest.raises(HarnessError, match="--bench-remote-hosts='none': expected one of live, off"):
        remote_host_flags("none", None)


FETCH_REMOTE = """const done = arguments[arguments.length - 1]; const started = performance.now();
fetch(arguments[0]).then(() => done(["answered", performance.now() - started]), (err) => done([String(err), performance.now() - started]));"""


@pytest.mark.browser
def test_with_remote_hosts_off_a_remote_call_fails_at_once_and_the_candidate_still_answers(todo_app: StaticServer) -> None:
    with SharedBrowser(BrowserOptions(remote_hosts="off")) as browser:
        browser.reset(todo_app.base_url)
        browser.driver.get(todo_app.base_url + "/")
        assert browser.driver.title  # the candidate on loopback is reached directly
        for url in ("https://www.themealdb.com/api/json/v1/1/random.php", "http://203.0.113.9/data.json"):
            outcome, took_ms = browser.driver.execute_async_script(FETCH_REMOTE, url)
            assert outcome == "TypeError: Failed to fetch" and took_ms < 500, (url, outcome, took_ms)


@pytest.mark.browser
@pytest.mark.slow
def test_a_scenario_draws_the_same_numbers_in_every_run_and_with_any_pool_size(tmp_path: Path, shared_cache: Path) -> None:
    """Through the plugin: two runs and two pool sizes record the same draws per scenario; --bench-bdd-seed=off does not."""
    candidate = _draws_bench(tmp_path)

    def run(*extra: str) -> dict[str, list[float]]:
        record = tmp_path / "draws.jsonl"
        record.unlink(missing_ok=True)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", f"--candidate={candidate}", "--bench-runtime=process", "-p", "no:cacheprovider", *extra],
            cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
            env={**os.environ, "DRAWS_RECORD": str(record), "BACKENDBENCH_CACHE": str(shared_cache)},
        )
        assert "6 passed" in done.stdout, done.stdout[-3000:]
        return {entry["scenario"]: entry["draws"] for entry in map(json.loads, record.read_text().splitlines())}

    one = run("--bench-bdd-sessions=1")
    assert len({json.dumps(d) for d in one.values()}) == 3  # each scenario its own numbers
    assert run("--bench-bdd-sessions=3") == one
    unseeded = run("--bench-bdd-sessions=1", "--bench-bdd-seed=off")
    assert all(unseeded[name] != draws for name, draws in one.items())
    assert all(reseeded[name] != draws for reseeded in [run("--bench-bdd-sessions=1", "--bench-bdd-seed=7")] for name, draws in one.items())


DRAWS_TASK = """id: draws
title: A page that shows three random numbers
kind: frontend
domains: [testing]
port: 8000
health: {path: /, timeout_s: 30}
requirements:
  R1: "The page shows three numbers"
"""
DRAWS_FEATURE = """@R1
Feature: Draws
""" + "".join(
    f"""
  Scenario: [Normal] Draw {n}
    Given the page is open
    Then it shows three numbers
"""
    for n in range(1, 4)
)
DRAWS_STEPS = """import json, os
from behave import given, then
from selenium import webdriver


@given("the page is open")
def open_page(context):
    context.driver = webdriver.Chrome()
    context.driver.get("file://index.html")


@then("it shows three numbers")
def three_numbers(context):
    draws = json.loads(context.driver.find_element("id", "draws").text)
    assert len(draws) == 3
    with open(os.environ["DRAWS_RECORD"], "a") as record:
        record.write(json.dumps({"scenario": context.scenario.name, "draws": draws}) + "\\n")
"""


def _draws_bench(root: Path) -> Path:
    return write_static_bench(root, "draws", DRAWS_TASK, "A page that shows three random numbers.\n", DRAWS_FEATURE, DRAWS_STEPS, DRAWS_PAGE)


def test_the_options_reach_the_browser_and_bad_values_are_refused(pytester: pytest.Pytester) -> None:
    from pytest_backendbench.bdd.settings import browser_options
    from pytest_backendbench.config import bench_config

    config = pytester.parseconfigure("--bench-remote-hosts=off", "--bench-bdd-seed=off")
    assert browser_options(config).remote_hosts == "off" and bench_config(config).bdd_seed == "off"
    defaults = pytester.parseconfigure()
    assert browser_options(defaults).remote_hosts == "live" and bench_config(defaults).bdd_seed == "0"
    result = pytester.runpytest("--bench-bdd-seed=lucky")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*--bench-bdd-seed*lucky*"])
