"""Writes the imported bench: the shared copy of BaxBench's test code, and one folder pair per task."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import yaml

from .bridge import VENDORED_DIR
from .frameworks import FrameworkImage

TIMEOUT_S = 300
"""BaxBench's per-test time limit (``--timeout`` of its src/main.py)."""
FUNCTIONAL_CATEGORY = "workflow"
REFERENCE_TEXT = "app.py.txt"
"""A scenario's secure reference in the importer's data (refs/<scenario>/): the text of the candidate's app.py,
named so that linters, type checkers and duplicate scans pass over it as data."""
SCENARIO_FILE_NAME = re.compile(r"SCENARIO_FILE_PATH(?:\}/|\.joinpath\(\")([\w.-]+)")

VENDORED_README = """\
# BaxBench's test code (copied by `backendbench import baxbench`; do not edit)

Source: logic-star-ai/baxbench (MIT licence), commit {commit}.

Copied unchanged: `cwes.py`, `exploits.py`, `scenarios/base.py` and every scenario module,
`scenario_files/`. BaxBench is written for Python 3.12; the one change is syntactic, for
Python 3.11: `type X = ...` statements became `X = ...` in {shimmed}.

Written here instead of copied: `scenarios/__init__.py` (BaxBench's imports every scenario;
each task imports only its own), and `env/` (BaxBench's builds images and opens a Docker
connection on import; the tests read only an `Env`'s fields and its crash check, which
`pytest_backendbench/importers/baxbench/standin_env.py` keeps line for line).
"""

ENV_BASE = '''\
"""BaxBench's ``env.base`` as its tests use it (written by ``backendbench import baxbench``)."""

from pytest_backendbench.importers.baxbench.standin_env import (  # noqa: F401
    COMMON_DOCKER_RUN_COMMANDS,
    MULTI_FILE_APP_PROMPT_STRUCTURE,
    SINGLE_FILE_APP_INSRUCTIONS,
    DatabaseTest,
    Env,
)
'''


def write_vendored(shimmed: Path, oracles: Path, shimmed_files: list[str], commit: str | None, modules: list[str]) -> list[str]:
    """Copy BaxBench's test code into ``oracles/_baxbench``; problems found on the way."""
    dest = oracles / VENDORED_DIR
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "scenarios").mkdir(parents=True)
    (dest / "env").mkdir()
    for name in ("cwes.py", "exploits.py"):
        shutil.copyfile(shimmed / name, dest / name)
    shutil.copyfile(shimmed / "scenarios" / "base.py", dest / "scenarios" / "base.py")
    problems = []
    for module in modules:
        shutil.copyfile(shimmed / "scenarios" / f"{module}.py", dest / "scenarios" / f"{module}.py")
        text = (shimmed / "scenarios" / f"{module}.py").read_text(encoding="utf-8")
        for missing in sorted({m for m in SCENARIO_FILE_NAME.findall(text) if not (shimmed / "scenario_files" / m).is_file()}):
            problems.append(f"scenario_files/{missing} (used by scenarios/{module}.py) is missing from the source; the tests that read it fail or end inconclusive")
    shutil.copytree(shimmed / "scenario_files", dest / "scenario_files", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "scenarios" / "__init__.py").write_text('"""BaxBench\'s scenario modules (each task imports its own)."""\n', encoding="utf-8")
    (dest / "env" / "__init__.py").write_text('"""BaxBench\'s env package, as its tests use it."""\n', encoding="utf-8")
    (dest / "env" / "base.py").write_text(ENV_BASE, encoding="utf-8")
    (dest / "IMPORTED.md").write_text(VENDORED_README.format(commit=commit or "unknown (not a git checkout)", shimmed=", ".join(shimmed_files) or "no file"), encoding="utf-8")
    return problems


def task_id_of(scenario: dict[str, Any], env: dict[str, Any]) -> str:
    """``Login`` on ``Python-Flask`` -> ``baxbench-login-python-flask``."""
    framework = re.sub(r"[^a-z0-9]+", "-", str(env["id"]).lower()).strip("-")
    return f"baxbench-{str(scenario['module']).replace('_', '-')}-{framework}"


def test_module(scenario: dict[str, Any], env: dict[str, Any]) -> str:
    """``oracles/<task>/test_baxbench.py``: one item per BaxBench test, each a call of the bridge."""
    env_fields = {k: env[k] for k in ("language", "extension", "framework", "dockerfile", "workdir", "sqlite_database", "manifest_files", "is_multi_file", "code_filename", "entrypoint_cmd", "allowed_packages", "env_instructions", "port", "wait_to_start_time")}
    lines = [
        f'"""BaxBench\'s tests of scenario {scenario["id"]} on {env["id"]}, run unchanged (written by `backendbench import baxbench`; do not edit).',
        "",
        "Each item calls the copied test in oracles/_baxbench/scenarios/ against a fresh container",
        "of the task's image; see pytest_backendbench/importers/baxbench/bridge.py.",
        '"""',
        "",
        "from pathlib import Path",
        "from typing import Any",
        "",
        "import pytest",
        "",
        "from pytest_backendbench.importers.baxbench.bridge import BaxBenchTask",
        "",
        f"BAXBENCH = BaxBenchTask(__file__, {scenario['module']!r}, {env_fields!r}, timeout_s={TIMEOUT_S})",
    ]
    for index, test in enumerate(scenario["functional_tests"], start=1):
        lines += [
            "",
            "",
            f'@pytest.mark.requirement("FT{index}")',
            f'@pytest.mark.category("{FUNCTIONAL_CATEGORY}")',
            f"def test_{_name(test['name'])}(container: Any, tmp_path: Path, record_property: Any) -> None:",
            f"    BAXBENCH.functional({test['name']!r}, container, tmp_path, record_property)",
        ]
    for index, test in enumerate(scenario["security_tests"], start=1):
        cwes = list(test["cwes"]) + ([] if 703 in test["cwes"] else [703])
        lines += [
            "",
            "",
            f'@pytest.mark.requirement("ST{index}")',
            '@pytest.mark.category("security")',
            f"@pytest.mark.cwe({', '.join(str(c) for c in cwes)})",
            f"def test_{_name(test['name'])}(container: Any, tmp_path: Path, record_property: Any) -> None:",
            f"    BAXBENCH.security({test['name']!r}, container, tmp_path, record_property)",
        ]
    return "\n".join(lines) + "\n"


def _name(test_name: str) -> str:
    """The item's name: BaxBench's function name without a leading ``test_`` (re-added)."""
    return test_name.removeprefix("test_")


def task_yaml(task_id: str, scenario: dict[str, Any], env: dict[str, Any], image: FrameworkImage, safety_prompt: str, strict: bool, commit: str | None) -> dict[str, Any]:
    """The task.yaml mapping."""
    requirements = {f"FT{i}": f"BaxBench functional test {t['name']} passes" for i, t in enumerate(scenario["functional_tests"], start=1)}
    requirements.update({f"ST{i}": f"BaxBench security test {t['name']} finds no CWE" for i, t in enumerate(scenario["security_tests"], start=1)})
    notes = list(image.notes)
    if not strict:
        notes.append("BaxBench's OpenAPI spec fails strict validation: it loads with a warning (openapi_strict: false) and no response is checked against it")
    data: dict[str, Any] = {
        "id": task_id,
        "title": f"BaxBench {scenario['id']} on {env['id']}: {scenario['short_app_description']}",
        "kind": "backend",
        "domains": ["baxbench"],
        "port": int(env["port"]),
        # BaxBench waits until GET / gets any answer. An HTTP check, not an open port: behind rootless
        # Podman's port forwarding the port is open before the server listens
        "health": {"path": "/", "timeout_s": float(env["wait_to_start_time"])},
        "env": {"APP_SECRET": "supers3cret"},
        "memory": "1g",
        "isolation": "item",
        "dockerfile": "Dockerfile",
        "build_files": sorted(image.build_files),
        "prompt": "verbatim",
        "requirements": requirements,
    }
    if not strict:
        data["openapi_strict"] = False
    data["baxbench"] = {
        "scenario": scenario["id"],
        "framework": env["id"],
        "safety_prompt": safety_prompt,
        "spec_type": "openapi",
        "code_files": [env["code_filename"]] if env["code_filename"] else "several (multi-file framework)",
        "source_commit": commit or "unknown",
        "notes": notes,
    }
    return data


def write_task(out: Path, scenario: dict[str, Any], env: dict[str, Any], image: FrameworkImage, safety_prompt: str, strict: bool, commit: str | None, refs: Path | None) -> str:
    """Write one task's benchmarks/ and oracles/ folders (replacing earlier imports of it)."""
    task_id = task_id_of(scenario, env)
    bench, oracle = out / "benchmarks" / task_id, out / "oracles" / task_id
    for folder in (bench, oracle):
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
    (bench / "spec.md").write_text(scenario["prompts"][env["id"]][safety_prompt], encoding="utf-8")
    (bench / "openapi.yaml").write_text(str(scenario["api_spec"]).lstrip("\n"), encoding="utf-8")
    (bench / "Dockerfile").write_text(image.dockerfile, encoding="utf-8")
    for name, text in image.build_files.items():
        (bench / name).write_text(text, encoding="utf-8")
    data = task_yaml(task_id, scenario, env, image, safety_prompt, strict, commit)
    (bench / "task.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
    (oracle / "test_baxbench.py").write_text(test_module(scenario, env), encoding="utf-8")
    if refs is not None:
        (oracle / "reference").mkdir()
        shutil.copyfile(refs / REFERENCE_TEXT, oracle / "reference" / "app.py")
        if (refs / "mutants.yaml").is_file():
            shutil.copyfile(refs / "mutants.yaml", oracle / "mutants.yaml")
    return task_id
