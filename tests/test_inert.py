"""Installed into a project that does not use it, the plugin changes nothing (issue 10, point 1)."""

from __future__ import annotations

import subprocess
import sys

import pytest

UNRELATED_CONFTEST = '''
import pytest

def pytest_addoption(parser):
    parser.addoption("--headed", action="store_true", help="this project's own option")
    parser.addoption("--task", default="none", help="this project's own option")

@pytest.fixture
def headed(request):
    return request.config.getoption("headed")
'''


def test_an_unrelated_project_with_a_benchmarks_folder_is_untouched(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(UNRELATED_CONFTEST)
    pytester.mkdir("benchmarks")
    pytester.mkdir("oracles")
    pytester.mkdir("mocks")
    pytester.path.joinpath("benchmarks", "test_speed.py").write_text("def test_speed(headed):\n    assert headed is True\n")
    pytester.path.joinpath("oracles", "test_oracle.py").write_text("def test_oracle(request):\n    assert request.config.getoption('task') == 'x'\n")
    pytester.path.joinpath("mocks", "test_mock.py").write_text(
        "def test_no_autouse_fixture(request):\n    assert 'backendbench_sample' not in request.fixturenames\n"
    )
    result = pytester.runpytest("--headed", "--task=x", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=3)
    names = {name for name, _ in pytester.parseconfigure().pluginmanager.list_name_plugin()}
    assert not {n for n in names if n and n.startswith("pytest_backendbench.")}, names


def test_its_options_are_namespaced(pytester: pytest.Pytester) -> None:
    help_text = pytester.runpytest("--help").stdout.str()
    assert "--bench-headed" in help_text and "--bench-runtime" in help_text
    for generic in ("--headed", "--task", "--runtime", "--model", "--seed", "--repeat", "--memory"):
        assert f"  {generic} " not in help_text and f"  {generic}=" not in help_text, generic


def test_a_bench_repository_run_without_candidate_collects_only_its_own_tests(pytester: pytest.Pytester, bench: object) -> None:
    pytester.makepyfile(test_own="def test_own():\n    pass\n")
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_start_up_imports_no_heavy_library() -> None:
    """Without a bench, pytest's start-up imports none of the libraries only a run needs."""
    code = (
        "import sys, pytest\n"
        "pytest.main(['--co', '-q', '-p', 'no:cacheprovider', '--rootdir', sys.argv[1], sys.argv[1]])\n"
        "heavy = [m for m in ('openapi_core', 'selenium', 'behave', 'psycopg', 'sqlglot', 'docker', 'requests') if m in sys.modules]\n"
        "print('HEAVY', ','.join(heavy))\n"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run([sys.executable, "-c", code, folder], capture_output=True, text=True, check=False).stdout
    line = next(x for x in out.splitlines() if x.startswith("HEAVY"))
    heavy = set(filter(None, line.split(" ", 1)[1].split(",")))
    assert not heavy, heavy
