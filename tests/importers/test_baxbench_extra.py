"""An imported BaxBench task whose scenario module needs the baxbench extra says which one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_backendbench.errors import OracleError
from pytest_backendbench.importers.baxbench import bridge


def test_a_scenario_module_missing_an_extra_module_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "_baxbench"
    (src / "scenarios").mkdir(parents=True)
    (src / "scenarios" / "__init__.py").write_text("")
    (src / "scenarios" / "gifs.py").write_text("import imageio\n")
    monkeypatch.setitem(sys.modules, "imageio", None)  # as if not installed: importing it raises ModuleNotFoundError
    for name in ("scenarios", "scenarios.gifs"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    try:
        with pytest.raises(OracleError, match=r"scenario module gifs imports imageio.*pip install 'pytest-backendbench\[baxbench\]'"):
            bridge._load(src, "gifs")
    finally:
        for name in ("scenarios", "scenarios.gifs"):
            sys.modules.pop(name, None)


def test_the_extra_lists_every_module_baxbench_imports_beyond_the_dependencies() -> None:
    setup_cfg = (Path(__file__).parents[2] / "setup.cfg").read_text()
    extra = setup_cfg.split("\nbaxbench =\n", 1)[1].split("\n\n", 1)[0]
    assert sorted(bridge.BAXBENCH_EXTRA_MODULES.values()) == sorted(line.split(">=")[0].strip() for line in extra.splitlines() if line.strip())
