"""When the relay is used and where its ports are published: settings first, then the engine
(no engine needed: the values come from the settings table through RuntimeOptions)."""

from __future__ import annotations

import pytest

from pytest_backendbench.runtime.base import RuntimeOptions
from pytest_backendbench.runtime.docker import DockerRuntime
from pytest_backendbench.runtime.relay import relay_bind, relay_wanted


@pytest.mark.parametrize(("engine", "forced", "expected"), [("Docker Engine - Community", True, True), ("Podman Engine", False, False), ("Podman Engine", None, True)])
def test_a_forced_choice_wins_over_the_engine(engine: str, forced: bool | None, expected: bool) -> None:
    assert relay_wanted(engine, forced) is expected


def test_relay_ports_bind_to_loopback_unless_the_engine_is_remote_or_an_address_is_set() -> None:
    assert relay_bind(None, "unix:///var/run/docker.sock") == "127.0.0.1"
    assert relay_bind(None, "tcp://build-host:2376") == "0.0.0.0"
    assert relay_bind(" 10.0.0.7 ", "tcp://build-host:2376") == "10.0.0.7"


def test_the_runtime_takes_the_relay_choice_from_its_options() -> None:
    # a client that is never asked: the option decides before the engine's name is read
    runtime = DockerRuntime(RuntimeOptions(session_id="relay-settings", relay=False), client=object())
    assert runtime.publish is False


def test_the_settings_reach_the_runtime_options(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BACKENDBENCH_ALLOW_UNENFORCED_LIMITS", "1")
    monkeypatch.setenv("BACKENDBENCH_DOCKER_PUBLISH", "0")
    monkeypatch.setenv("BACKENDBENCH_RELAY_BIND", "10.0.0.7")
    pytester.makeconftest(
        "from pytest_backendbench.config import bench_config\n"
        "from pytest_backendbench.session import runtime_options\n"
        "from pytest_backendbench.tasks import TaskCatalog\n"
        "def pytest_report_header(config):\n"
        "    o = runtime_options(bench_config(config), 's', TaskCatalog(config.rootpath), None)\n"
        "    return f'runtime options: {o.allow_unenforced_limits} {o.relay} {o.relay_bind}'\n"
    )
    pytester.runpytest().stdout.fnmatch_lines(["runtime options: True False 10.0.0.7"])
