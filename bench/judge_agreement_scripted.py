"""``backendbench judge-agreement`` over the full-stack tasks with a scripted judge (no model needed).

The judge is tests/judges/scripted_model.py's server answering YES to everything, in each
judge's format (a GUI step ``Action: ANSWER; YES``, an API case ``Final Judgement: YES``, the
database judge ``{"answer": "Yes"}``, the DB-log check, an appearance grade). Such a judge
agrees with the oracle on every candidate that is right and passes every mutant the oracle
catches: the matrix's "oracle- judge+" column shows what an uncritical judge would let through.

    python bench/judge_agreement_scripted.py [--max-mutants 2] [--no-alternates] [TASK ...]

Every other argument goes to ``backendbench judge-agreement`` (--runtime, --workdir, --json).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "judges"))

from scripted_model import ChatRequest, ScriptedModelServer  # the tests' server

ANSWERS = {
    "gui-step": "Thought: the page shows the expected result.\nAction: ANSWER; YES",
    "api-step": "The expected result is achieved.\nFinal Judgement: YES",
    "api-explore": "No endpoints explored.",
    "db-verdict": '```json\n{"answer": "Yes"}\n```',
    "db-interaction": "Database Interaction Correctness: YES",
    "appearance": "Grade: 3",
}


def answer(request: ChatRequest) -> str:
    """YES in the format of the judge that asks."""
    return ANSWERS.get(request.purpose, "YES")


def main(argv: list[str]) -> int:
    from pytest_backendbench.cli.main import main as backendbench

    with ScriptedModelServer(answer) as server:
        return backendbench(["judge-agreement", "--bench-root", str(REPO), "--judge", f"openai:{server.model}", "--judge-base-url", server.base_url, *argv])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
