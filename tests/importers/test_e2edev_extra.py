"""The importer names the modules of the [e2edev] extra that the step code needs and Python lacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_backendbench.bdd.scenarios import step_loading
from pytest_backendbench.importers.e2edev import ImportSummary, missing_extra_modules


def test_step_modules_importing_a_missing_extra_module_are_named_with_the_install_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(step_loading.E2EDEV_EXTRA_MODULES, "surely_not_installed_cv", "surely-not-installed")
    steps = tmp_path / "oracle" / "features" / "steps"
    steps.mkdir(parents=True)
    (steps / "R1_1.py").write_text("import json\nimport surely_not_installed_cv as cv\nfrom bs4 import BeautifulSoup\n")
    missing = missing_extra_modules([tmp_path / "oracle"])
    assert missing == ["surely_not_installed_cv"]  # bs4 is installed here
    summary = ImportSummary(source=tmp_path, out=tmp_path, missing_modules=missing)
    assert "import surely_not_installed_cv, which this Python cannot import" in summary.format()
    assert "pip install 'pytest-backendbench[e2edev]'" in summary.format()
