"""bench/baxbench_native.py without an engine: the source shim, the log parser, the judge, and the
BaxBench references with their mutants (every edit applies once, every mutant names its CWEs)."""

from __future__ import annotations

import importlib.util
import py_compile
import sys
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
REFS = ROOT / "pytest_backendbench" / "importers" / "baxbench" / "refs"
# BaxBench's 28 scenarios (src/scenarios/*.py ids)
SCENARIOS = {
    "Calculator", "ClickCount", "Compiler", "CreditCardService", "FileSearch", "Forum", "FrameExtract", "ImageConverter",
    "ImageTransfer", "Logger", "Login", "Monitor", "PDFCat", "PDFToText", "ProductCatalog", "ProfileCollection", "Recipes",
    "RecommendationService", "RegexSearch", "SecretStorage", "ShopOverview", "ShoppingCartService", "SongDownloader",
    "Unsubscribe", "UptimeService", "UserCreation", "Wiki", "ZipToTxt",
}


@pytest.fixture(scope="module")
def native() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_baxbench_native", ROOT / "bench" / "baxbench_native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def fake_baxbench(root: Path) -> Path:
    """The few lines of BaxBench's src/ that the shim rewrites, in its own shape."""
    src = root / "src"
    (src / "scenarios").mkdir(parents=True)
    (src / "main.py").write_text("import tasks\n")
    (src / "print.py").write_text("def f(envid):\n    return f'{envid.replace(\"-\", \"\\n\")} x'\n")
    (src / "scenarios" / "base.py").write_text("from typing import Callable\ntype FunctionalTest = Callable[[int], bool]\n")
    (src / "tasks.py").write_text(
        "import json\n"
        "def loop(result, logger, st, cwes):\n"
        "                if True:\n"
        "                    result.record_st_result(cwes)\n"
    )
    return root


def test_shim_makes_the_source_python_311_and_logs_each_security_test(native: ModuleType, tmp_path: Path) -> None:
    src = native.shim_source(fake_baxbench(tmp_path / "bb"), tmp_path / "out")
    for path in src.rglob("*.py"):
        py_compile.compile(str(path), doraise=True)
    assert "FunctionalTest = Callable" in (src / "scenarios" / "base.py").read_text()
    assert native.SECURITY_MARK in (src / "tasks.py").read_text()


def test_shim_refuses_a_source_whose_anchor_moved(native: ModuleType, tmp_path: Path) -> None:
    root = fake_baxbench(tmp_path / "bb")
    (root / "src" / "tasks.py").write_text("def loop():\n    pass\n")
    with pytest.raises(RuntimeError, match="anchor not found once"):
        native.shim_source(root, tmp_path / "out")


def test_parse_sample_reads_functional_crashes_and_security_cwes(native: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "test.log").write_text(
        "INFO x Functional test func_ok passed\n"
        "WARNING x server process crashed during functional test\n"
        "INFO x Functional test func_crash failed\n"
        f"INFO x {native.SECURITY_MARK} sec_sql [89, 863]\n"
        f"INFO x {native.SECURITY_MARK} sec_none null\n"
        f"INFO x {native.SECURITY_MARK} sec_clean []\n"
    )
    verdict = native.parse_sample(tmp_path)
    assert verdict["functional"] == {"func_ok": True, "func_crash": False}
    assert verdict["functional_crashed"] == ["func_crash"]
    assert verdict["security"] == {"sec_sql": [89, 863], "sec_none": None, "sec_clean": []}


def test_judge_needs_a_clean_reference_and_the_planted_cwes(native: ModuleType) -> None:
    clean = {"built": True, "functional": {"f": True}, "functional_crashed": [], "security": {"s": [], "t": None}}
    caught = {"built": True, "functional": {"f": True}, "functional_crashed": [], "security": {"s": [89], "t": None}}
    result = {"candidates": {"X": {"reference": clean, "m1": caught, "m2": clean}}}
    lines = native.judge(result, {"X": {"reference": [], "m1": [89], "m2": [79]}})
    assert [line.split()[0] for line in lines] == ["OK", "OK", "FAIL"]
    assert "inconclusive=['t']" in lines[0]


def test_every_scenario_has_a_reference_and_mutants_that_apply(native: ModuleType, tmp_path: Path) -> None:
    assert {p.name for p in REFS.iterdir() if (p / "app.py.txt").is_file()} == SCENARIOS
    assert not list(REFS.rglob("*.py")), "the references are the importer's data (app.py.txt), not modules of the package"
    expected = native.materialize_refs(REFS, sorted(SCENARIOS), tmp_path)
    for scenario, names in expected.items():
        mutants = {name: cwes for name, cwes in names.items() if name != "reference"}
        assert mutants, f"{scenario} has no mutant"
        for name, cwes in mutants.items():
            assert cwes, f"{scenario}/{name} names no expected_cwes"
            py_compile.compile(str(tmp_path / scenario / name / "app.py"), doraise=True)
            assert (tmp_path / scenario / name / "app.py").read_text() != (tmp_path / scenario / "reference" / "app.py").read_text()
        entries = yaml.safe_load((REFS / scenario / "mutants.yaml").read_text())["mutants"]
        assert all(entry["expect_category"] == "security" for entry in entries)
