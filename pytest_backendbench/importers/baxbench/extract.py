"""Reads BaxBench's scenarios and environments with its own code, in a child process.

Run as ``python extract.py SRC SAFETY`` where SRC is a (3.11-shimmed) copy of BaxBench's
``src/``; prints one JSON document. It runs apart from the importer because BaxBench's modules
use top-level names (``env``, ``scenarios``, ``cwes``) and connect to Docker when imported
(``env/base.py`` makes a client at import time): neither may leak into the caller's process.
The prompts are built by BaxBench's ``Scenario.build_prompt``, so spec.md is its prompt word
for word. Only the standard library, PyYAML and the docker SDK (BaxBench's own needs) are used.
"""

from __future__ import annotations

import inspect
import json
import sys
import types
from typing import Any

SAFETY_PROMPTS = ("none", "generic", "specific")


def _without_docker_connection() -> None:
    """BaxBench's env/base.py calls ``docker.from_env()`` at import; nothing here talks to Docker."""
    import docker

    docker.from_env = lambda *args, **kwargs: None


TEST_ONLY_MODULES = ("imageio", "pdfplumber")
"""Libraries BaxBench's tests use inside test bodies only; reading the scenarios needs none of them."""


def _without_test_only_modules() -> None:
    """Empty stand-ins for test-only libraries that are not installed (this child reads, never tests)."""
    import importlib.util

    for name in TEST_ONLY_MODULES:
        if importlib.util.find_spec(name) is None:
            sys.modules[name] = types.ModuleType(name)


def _cwes_of(function: Any, module: types.ModuleType, exploits: types.ModuleType, cwe_enum: Any) -> list[int]:
    """The CWEs BaxBench infers for a security test (CWE names in its source, as
    ``infer_cwe_from_funs`` does), also looking into the exploits helpers it calls, whose
    docstrings name what they return (e.g. ``test_sqlite_db_contains_passwords``)."""
    sources = [inspect.getsource(function)]
    for name in function.__code__.co_names:
        helper: object = getattr(exploits, name, None)
        imported = getattr(module, name, None) is helper
        if imported and isinstance(helper, types.FunctionType):
            sources.append(inspect.getsource(helper))
    found = [member.value["num"] for member in cwe_enum if any(member.name in source for source in sources)]
    return sorted(set(found))


def extract(src: str) -> dict[str, Any]:
    """Every scenario (tests, spec, prompts per framework and safety prompt) and environment."""
    sys.path.insert(0, src)
    _without_docker_connection()
    _without_test_only_modules()
    import cwes
    import exploits
    from env import all_envs
    from env.base import COMMON_DOCKER_RUN_COMMANDS
    from scenarios import all_scenarios

    envs = []
    for env in all_envs:
        envs.append(
            {
                "id": env.id,
                "language": env.language,
                "framework": env.framework,
                "extension": env.extension,
                "dockerfile": env.dockerfile,
                "workdir": env.workdir,
                "sqlite_database": env.sqlite_database,
                "manifest_files": dict(env.manifest_files),
                "is_multi_file": env.is_multi_file,
                "code_filename": env.code_filename,
                "entrypoint_cmd": env.entrypoint_cmd,
                "allowed_packages": env.allowed_packages,
                "env_instructions": env.env_instructions,
                "port": env.port,
                "wait_to_start_time": env.wait_to_start_time,
            }
        )
    scenarios = []
    for scenario in all_scenarios:
        module = inspect.getmodule((scenario.functional_tests + scenario.security_tests)[0])
        if module is None:
            raise RuntimeError(f"cannot tell which module defines scenario {scenario.id}")
        prompts = {env.id: {safety: scenario.build_prompt(env, "openapi", safety, agent=False) for safety in SAFETY_PROMPTS} for env in all_envs}
        scenarios.append(
            {
                "id": scenario.id,
                "module": module.__name__.rsplit(".", 1)[-1],
                "short_app_description": scenario.short_app_description,
                "api_spec": scenario.api_spec,
                "needs_db": scenario.needs_db,
                "needs_secret": scenario.needs_secret,
                "needed_packages": {k: list(v) for k, v in scenario.needed_packages.items()},
                "potential_cwes": sorted(c.value["num"] for c in scenario.potential_cwes),
                "functional_tests": [{"name": t.__name__, "doc": inspect.getdoc(t) or ""} for t in scenario.functional_tests],
                "security_tests": [
                    {"name": t.__name__, "doc": inspect.getdoc(t) or "", "cwes": _cwes_of(t, module, exploits, cwes.CWE)} for t in scenario.security_tests
                ],
                "prompts": prompts,
            }
        )
    return {"envs": envs, "scenarios": scenarios, "common_commands": list(COMMON_DOCKER_RUN_COMMANDS)}


if __name__ == "__main__":
    json.dump(extract(sys.argv[1]), sys.stdout)
