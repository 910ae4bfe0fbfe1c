"""The settings table (config.py): precedence, extension by concern modules, the README table."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_backendbench.config import BenchConfig, Setting, all_settings
from pytest_backendbench.settings_readme import README_BEGIN, README_END, markdown_table

REPO = Path(__file__).resolve().parents[1]
SHOW = '''
from pytest_backendbench.config import bench_config

def test_show(pytestconfig):
    bench = bench_config(pytestconfig)
    print("VALUES", bench.request_timeout, bench.source("request_timeout"), bench.runtime, ",".join(bench.tasks))
'''


def test_command_line_beats_environment_beats_ini_beats_default(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_show=SHOW)
    pytester.makeini("[pytest]\nbackendbench_request_timeout = 7\nbackendbench_tasks =\n    a\n    b\n")
    pytester.runpytest("-s", "-p", "no:cacheprovider").stdout.fnmatch_lines(["*VALUES 7.0 ini backendbench_request_timeout auto a,b"])
    monkeypatch.setenv("BACKENDBENCH_REQUEST_TIMEOUT", "8")
    monkeypatch.setenv("BACKENDBENCH_RUNTIME", "process")
    pytester.runpytest("-s", "-p", "no:cacheprovider").stdout.fnmatch_lines(["*VALUES 8.0 BACKENDBENCH_REQUEST_TIMEOUT process a,b"])
    result = pytester.runpytest("-s", "-p", "no:cacheprovider", "--bench-request-timeout=9", "--bench-task=c")
    result.stdout.fnmatch_lines(["*VALUES 9.0 --bench-request-timeout process c"])


def test_a_bad_environment_value_names_the_variable(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    pytester.makepyfile(test_show=SHOW)
    monkeypatch.setenv("BACKENDBENCH_REQUEST_TIMEOUT", "soon")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*BACKENDBENCH_REQUEST_TIMEOUT='soon': expected a number of seconds greater than 0 (per-request timeout of the http fixture)*"])
    monkeypatch.setenv("BACKENDBENCH_REQUEST_TIMEOUT", "1")
    monkeypatch.setenv("BACKENDBENCH_RUNTIME", "vm")
    pytester.runpytest("-p", "no:cacheprovider").stderr.fnmatch_lines(["*BACKENDBENCH_RUNTIME='vm': expected one of auto, docker, process*"])


def test_resolution_is_a_pure_function_of_its_sources() -> None:
    table = (
        Setting("flag", "--x-flag", action="store_true", default=False),
        Setting("items", "--x-item", action="append", default=[]),
        Setting("level", "--x-level", int, 3),
    )
    ini = {"backendbench_items": ["i1"], "backendbench_level": "4"}
    bench = BenchConfig.resolve(table, {"bb_flag": None, "bb_items": None, "bb_level": None}, {"BACKENDBENCH_FLAG": "yes"}, ini.get)
    assert (bench.flag, bench.items, bench.level) == (True, ["i1"], 4)
    assert bench.source("flag") == "BACKENDBENCH_FLAG" and bench.source("level") == "ini backendbench_level"
    assert not bench.given("nothing") and bench.given("items")
    with pytest.raises(AttributeError, match="'BenchConfig' object has no attribute 'nope'"):
        _ = bench.nope
    with pytest.raises(AttributeError, match="the resolved settings are read-only"):
        bench.level = 5  # type: ignore[attr-defined]


def test_every_setting_is_a_typed_attribute_declared_on_bench_config() -> None:
    """mypy checks ``bench.<name>`` against these declarations, so a misspelled name fails the gate."""
    declared = {name for name in BenchConfig.__annotations__ if not name.startswith("_")}
    assert declared == {s.name for s in all_settings()}, "declare every SETTINGS row on BenchConfig (config.py) with its type"
    bench = BenchConfig.resolve(all_settings(), {}, {}, lambda key: None)
    assert (bench.memory, bench.tasks, bench.generate, bench.model) == ("512m", [], False, None)


def test_a_concern_module_contributes_settings_to_the_same_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_concern.py").write_text(
        "from pytest_backendbench.config import Setting\n"
        "SETTINGS = (Setting('widgets', '--bench-widgets', int, 2, 'how many widgets', group='widgets'),)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    table = all_settings(("pytest_backendbench.config", "my_concern"))
    assert table[-1].name == "widgets" and table[-1].env_var == "BACKENDBENCH_WIDGETS" and table[-1].ini_key == "backendbench_widgets"
    assert "| `--bench-widgets` | `BACKENDBENCH_WIDGETS` | `backendbench_widgets` | `2` | how many widgets |" in markdown_table(table)
    (tmp_path / "clash.py").write_text("from pytest_backendbench.config import Setting\nSETTINGS = (Setting('runtime', '--other'),)\n")
    with pytest.raises(ValueError, match="setting 'runtime' declared twice"):
        all_settings(("pytest_backendbench.config", "clash"))


def test_the_readme_table_is_the_settings_table() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text[text.index(README_BEGIN) + len(README_BEGIN): text.index(README_END)].strip()
    assert block == markdown_table(all_settings()).strip(), "regenerate it: python -m pytest_backendbench.settings_readme --write README.md"


def test_every_option_is_namespaced_or_ours_alone() -> None:
    ours = ("--candidate", "--oracle-tier", "--strict-contract", "--image-alias", "--base-image", "--postgres-image", "--generate-jobs",
            "--chromium", "--chromedriver", "--browser-locale", "--browser-arg", "--bdd-sleep")
    for setting in all_settings():
        if setting.option is None:
            continue
        assert setting.option.startswith(("--bench-", "--openai-", "--agent-", "--verify-")) or setting.option in ours, setting.option


def test_one_cache_dir_rule_honours_the_variable_then_xdg_then_home() -> None:
    from pytest_backendbench.config import default_cache_dir

    assert default_cache_dir({"BACKENDBENCH_CACHE": "/c", "XDG_CACHE_HOME": "/x"}) == Path("/c")
    assert default_cache_dir({"XDG_CACHE_HOME": "/x"}) == Path("/x/pytest-backendbench")
    assert default_cache_dir({}) == Path.home() / ".cache" / "pytest-backendbench"


def test_code_without_a_pytest_config_reads_variables_through_the_table() -> None:
    from pytest_backendbench.config import environment_value

    assert environment_value("docker_relay", {"BACKENDBENCH_DOCKER_RELAY": "0"}) is False
    assert environment_value("relay_bind", {}) is None
    with pytest.raises(pytest.UsageError, match=r"BACKENDBENCH_REPEAT='0': expected a whole number of at least 1"):
        environment_value("repeat", {"BACKENDBENCH_REPEAT": "0"})
    with pytest.raises(KeyError, match="no backendbench setting 'candidate' read from the environment"):
        environment_value("candidate", {})


def test_a_bench_run_gets_the_pytest_options_it_needs_unless_the_command_line_says_otherwise() -> None:
    from pytest_backendbench.command_line import bench_arguments

    assert bench_arguments(["--candidate=x"]) == ["--import-mode=importlib", "--continue-on-collection-errors"]
    assert bench_arguments(["--import-mode", "importlib", "--continue-on-collection-errors"]) == []
    with pytest.raises(pytest.UsageError, match=r"--import-mode=append: oracle modules of different tasks share file names"):
        bench_arguments(["--import-mode=append"])


BAD_VALUES = [
    # (kind, option, env, ini, bad value, what the message says is accepted)
    ("size", "--bench-memory", "BACKENDBENCH_MEMORY", "backendbench_memory", "lots", "a size such as 512m or 2g"),
    ("duration", "--bench-build-timeout", "BACKENDBENCH_BUILD_TIMEOUT", "backendbench_build_timeout", "-5", "a number of seconds greater than 0"),
    ("count", "--bench-pids", "BACKENDBENCH_PIDS", "backendbench_pids", "0", "a whole number of at least 1"),
    ("url", "--openai-base-url", "BACKENDBENCH_OPENAI_BASE_URL", "backendbench_openai_base_url", "localhost:8000", "an http:// or https:// URL with a host"),
    ("enumeration", "--bench-runtime", "BACKENDBENCH_RUNTIME", "backendbench_runtime", "vm", "one of auto, docker, process"),
    ("path", "--bench-root", "BACKENDBENCH_BENCH_ROOT", "backendbench_bench_root", "no/such/folder", "the path of a folder that exists"),
    ("tier", "--oracle-tier", "BACKENDBENCH_ORACLE_TIER", "backendbench_oracle_tier", "latest", "base, r1, r2, ... or final (run oracle tiers up to this one"),
    ("repeatable choice", "--bench-category", "BACKENDBENCH_CATEGORIES", "backendbench_categories", "authorisation", "one of api_surface, authorization,"),
]


@pytest.mark.parametrize(("kind", "option", "env", "ini", "bad", "accepted"), BAD_VALUES, ids=[v[0] for v in BAD_VALUES])
def test_a_bad_value_of_every_kind_is_refused_before_collection_from_each_source(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, kind: str, option: str, env: str, ini: str, bad: str, accepted: str
) -> None:
    """One line naming where the value came from, the value and what is accepted; nothing collected."""
    pytester.makepyfile(test_never="def test_never():\n    raise AssertionError('collected')\n")

    def refused(*args: str, source: str) -> None:
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, kind
        if kind == "enumeration" and source == option:  # argparse checks choices itself, naming the option
            result.stderr.fnmatch_lines([f"*argument {option}: invalid choice: '{bad}'*"])
        else:
            result.stderr.fnmatch_lines([f"ERROR: {source}='{bad}': expected {accepted}*"])
        assert "collected" not in result.stdout.str() + result.stderr.str()

    refused(f"{option}={bad}", source=option)
    monkeypatch.setenv(env, bad)
    refused(source=env)
    monkeypatch.delenv(env)
    pytester.makeini(f"[pytest]\n{ini} = {bad}\n")
    refused(source=f"ini {ini}")


def test_good_values_of_every_kind_are_accepted(tmp_path: Path) -> None:
    from pytest_backendbench.config import all_settings

    cli = {"bb_memory": "2G", "bb_build_timeout": "2.5", "bb_pids": "64", "openai_base_url": "https://models.example/v1", "bb_bench_root": str(tmp_path), "bb_shard": "2/3"}
    bench = BenchConfig.resolve(all_settings(), cli, {}, lambda key: None)
    assert (bench.memory, bench.build_timeout, bench.pids, bench.openai_base_url, bench.bench_root, bench.shard) == ("2g", 2.5, 64, "https://models.example/v1", str(tmp_path), "2/3")
