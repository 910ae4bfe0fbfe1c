"""The cost of one response check against openapi.yaml: openapi-core's plain path against ``Contract``'s.

    python bench/contract_check.py --task issue-tracker --task feature-flags

For each task it runs the oracle once against the reference (process runtime, in this process)
and keeps every response the contract check saw. Then it checks each response with
``Contract(reuse=False)`` (openapi-core as it comes) and with ``Contract`` (schema validators and
the path list built once), prints the CPU milliseconds per response of both and their ratio, and
compares the verdicts: on the responses as they came and on broken copies of each (a field
dropped, a value of the wrong type, an undocumented status, another content type), so that both
"no violation" and "violations" are compared. Exit 1 when any verdict differs.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import pytest
import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_backendbench import openapi_contract
from pytest_backendbench.openapi_contract import Contract
from pytest_backendbench.tasks import TaskCatalog, load_contract


class ResponseRecorder:
    """A pytest plugin object: keeps a copy of every response ``Contract.violations`` is given."""

    def __init__(self) -> None:
        self.responses: list[requests.Response] = []
        self._real = openapi_contract.Contract.violations

    def pytest_configure(self) -> None:
        recorder = self

        def recording(contract: Contract, response: requests.Response) -> list[str]:
            recorder.responses.append(copy.copy(response))
            return recorder._real(contract, response)

        openapi_contract.Contract.violations = recording  # type: ignore[method-assign]

    def pytest_unconfigure(self) -> None:
        openapi_contract.Contract.violations = self._real  # type: ignore[method-assign]


def record(task: str) -> list[requests.Response]:
    """Every response the task's oracle checks against the contract, the reference answering."""
    recorder = ResponseRecorder()
    with tempfile.TemporaryDirectory(prefix="contract-check-") as report_dir:
        code = pytest.main([f"oracles/{task}", f"--candidate=oracles/{task}/reference", f"--bench-task={task}", "--bench-runtime=process",
                            "-q", "--no-header", "-p", "no:cacheprovider", f"--bench-report-dir={report_dir}"], plugins=[recorder])
    if code != 0:
        raise SystemExit(f"the oracle of {task} did not pass on its reference (exit {code}): fix that first")
    return recorder.responses


def broken_copies(response: requests.Response) -> list[requests.Response]:
    """Copies of a response that break a contract in the usual ways (where the body allows)."""
    copies = []
    for status, content_type in ((599, None), (None, "text/plain")):
        broken = copy.copy(response)
        broken.headers = requests.structures.CaseInsensitiveDict(response.headers)
        if status is not None:
            broken.status_code = status
        if content_type is not None:
            broken.headers["Content-Type"] = content_type
        copies.append(broken)
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return copies
    target = body[0] if isinstance(body, list) and body and isinstance(body[0], dict) else body
    if isinstance(target, dict) and target:
        first = next(iter(target))
        for change in ("drop", "retype"):
            changed = copy.deepcopy(body)
            inner = changed[0] if isinstance(changed, list) else changed
            if change == "drop":
                del inner[first]
            else:
                inner[first] = [inner[first]] if not isinstance(inner[first], list) else "not a list"
            broken = copy.copy(response)
            broken._content = json.dumps(changed).encode()
            copies.append(broken)
    return copies


def cpu_ms_per_check(contract: Contract, responses: list[requests.Response]) -> tuple[float, list[list[str]]]:
    """CPU milliseconds per response (after a warm-up on the first 50), and the verdicts."""
    for response in responses[:50]:
        contract.violations(response)
    started = time.process_time()
    verdicts = [contract.violations(response) for response in responses]
    return (time.process_time() - started) / max(1, len(responses)) * 1000, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[], help="a bundled task with an openapi.yaml (repeatable)")
    args = parser.parse_args()
    catalog = TaskCatalog(ROOT)
    differing = 0
    print("| task | responses | plain openapi-core ms | Contract ms | ratio | broken copies | with violations | verdicts differing |")
    print("|---|---|---|---|---|---|---|---|")
    for task in args.task or ["issue-tracker"]:
        spec = load_contract(catalog.load(task))
        if spec is None:
            raise SystemExit(f"{task} has no openapi.yaml")
        responses = record(task)
        plain_ms, plain_verdicts = cpu_ms_per_check(Contract(spec, reuse=False), responses)
        reused_ms, reused_verdicts = cpu_ms_per_check(Contract(spec), responses)
        broken = [b for r in responses for b in broken_copies(r)]
        _, plain_broken = cpu_ms_per_check(Contract(spec, reuse=False), broken)
        _, reused_broken = cpu_ms_per_check(Contract(spec), broken)
        differ = sum(a != b for a, b in zip(plain_verdicts + plain_broken, reused_verdicts + reused_broken))
        differing += differ
        with_violations = sum(bool(v) for v in plain_verdicts + plain_broken)
        print(f"| {task} | {len(responses)} | {plain_ms:.3f} | {reused_ms:.3f} | {plain_ms / reused_ms:.2f}x | {len(broken)} | {with_violations} | {differ} |")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
