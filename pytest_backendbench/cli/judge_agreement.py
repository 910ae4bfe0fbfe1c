"""``backendbench judge-agreement``: how often a judge agrees with the deterministic oracle.

Before trusting a model's verdicts a user needs to know how they compare with verdicts that are
known to be right. For the full-stack tasks (event-registration, expense-split, forms) every
requirement that calibration cases (``oracles/<task>/judge/cases.yaml``) cover is also checked
by deterministic items; this command runs the judge beside them over each task's reference,
alternates and mutants and prints, per requirement, the confusion matrix of the two verdicts
over the candidates: the requirement holds for the oracle when every deterministic item of it
passed, for the judge when every judge case of it counted YES. Candidates where either side
ended in a harness error are left out (and counted). ``--reports`` computes the same from
report.json files of runs made with ``--bench-judge``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HarnessError
from ..results import ORACLE_KINDS

FULL_STACK_TASKS = ("event-registration", "expense-split", "forms")
CELLS = ("both_pass", "judge_fails", "judge_passes", "both_fail")
"""(oracle holds, judge holds): (yes, yes), (yes, no), (no, yes), (no, no)."""


@dataclass
class Agreement:
    """The confusion matrix of one requirement over the candidates judged."""

    cells: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CELLS, 0))
    undetermined: int = 0
    disagreements: list[str] = field(default_factory=list)

    def add(self, oracle: bool, judge: bool, candidate: str) -> None:
        cell = CELLS[(0 if oracle else 2) + (0 if judge else 1)]
        self.cells[cell] += 1
        if oracle != judge:
            self.disagreements.append(candidate)

    @property
    def total(self) -> int:
        return sum(self.cells.values())

    @property
    def agreement(self) -> float | None:
        return (self.cells["both_pass"] + self.cells["both_fail"]) / self.total if self.total else None

    def kappa(self) -> float | None:
        """Cohen's kappa: agreement beyond what the two sides' pass rates give by chance."""
        n = self.total
        if not n:
            return None
        oracle_pass = (self.cells["both_pass"] + self.cells["judge_fails"]) / n
        judge_pass = (self.cells["both_pass"] + self.cells["judge_passes"]) / n
        chance = oracle_pass * judge_pass + (1 - oracle_pass) * (1 - judge_pass)
        observed = self.agreement or 0.0
        return None if chance == 1 else (observed - chance) / (1 - chance)


def requirement_verdicts(task_result: dict[str, Any]) -> tuple[dict[str, bool | None], dict[str, bool | None]]:
    """(oracle, judge) verdict per requirement the judge cases cover; None where an error leaves it unknown."""
    oracle: dict[str, list[str]] = defaultdict(list)
    judge: dict[str, list[str]] = defaultdict(list)
    for item in task_result.get("items") or []:
        if item.get("outcome") == "skipped":
            continue
        target = judge if item.get("kind") == "judge" else oracle if item.get("kind") in ORACLE_KINDS else None
        if target is None:
            continue
        for requirement in item.get("requirements") or []:
            target[requirement].append(str(item.get("outcome")))

    def verdict(outcomes: list[str]) -> bool | None:
        if not outcomes or "error" in outcomes:
            return None
        return all(o == "passed" for o in outcomes)

    return {r: verdict(oracle.get(r, [])) for r in judge}, {r: verdict(o) for r, o in judge.items()}


def agreement_of(reports: list[dict[str, Any]]) -> dict[tuple[str, str], Agreement]:
    """The matrix per (task, requirement) over every candidate of the reports."""
    table: dict[tuple[str, str], Agreement] = {}
    for report in reports:
        for task_result in report.get("tasks") or []:
            task = str(task_result.get("task"))
            candidate = str(task_result.get("candidate_path") or task_result.get("candidate") or task)
            oracle, judge = requirement_verdicts(task_result)
            for requirement in judge:
                cell = table.setdefault((task, requirement), Agreement())
                if oracle[requirement] is None or judge[requirement] is None:
                    cell.undetermined += 1
                else:
                    cell.add(bool(oracle[requirement]), bool(judge[requirement]), candidate)
    return dict(sorted(table.items(), key=lambda kv: (kv[0][0], _requirement_order(kv[0][1]))))


def _requirement_order(requirement: str) -> tuple[int, str]:
    digits = "".join(c for c in requirement if c.isdigit())
    return (int(digits) if digits else 0, requirement)


def render(table: dict[tuple[str, str], Agreement]) -> list[str]:
    """The printed table: one row per requirement, then the whole."""
    header = ("task", "req", "oracle+ judge+", "oracle+ judge-", "oracle- judge+", "oracle- judge-", "agree", "kappa", "undetermined")
    rows = []
    whole = Agreement()
    for (task, requirement), cell in table.items():
        rows.append((task, requirement, *(str(cell.cells[c]) for c in CELLS), _percent(cell.agreement), _number(cell.kappa()), str(cell.undetermined)))
        for name in CELLS:
            whole.cells[name] += cell.cells[name]
        whole.undetermined += cell.undetermined
    rows.append(("all", "", *(str(whole.cells[c]) for c in CELLS), _percent(whole.agreement), _number(whole.kappa()), str(whole.undetermined)))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


# --- running the candidates ----------------------------------------------------------------------


def candidates_of(task: Any, workdir: Path, mutants: int | None, alternates: bool) -> list[Path]:
    """The reference, then the alternates and the materialized mutants of a task (the first ``mutants``; None: all)."""
    from .validate import alternates_of, load_mutants, materialize_mutant

    found = [task.reference_dir]
    if alternates:
        found += alternates_of(task)
    if mutants != 0:
        for mutant in load_mutants(task)[:mutants]:
            found.append(materialize_mutant(task, mutant, workdir / task.id / f"mutant-{mutant.name}"))
    return found


def run_agreement(bench_root: Path, tasks: list[str], judge_args: list[str], runtime: str, workdir: Path, mutants: int | None, alternates: bool) -> list[dict[str, Any]]:
    """Evaluate every candidate of every task with the judge; the reports, one per candidate."""
    from ..tasks import TaskCatalog
    from .validate import evaluate

    catalog = TaskCatalog(bench_root)
    reports = []
    for task_id in tasks:
        task = catalog.load(task_id)
        if not (task.oracle_dir / "judge" / "cases.yaml").is_file():
            raise HarnessError(f"{task_id} has no judge cases (oracles/{task_id}/judge/cases.yaml): nothing to compare")
        for index, candidate in enumerate(candidates_of(task, workdir, mutants, alternates)):
            outcome = evaluate(bench_root, task, candidate, runtime, workdir / task_id / f"{index:02d}", judge_args)
            for result in outcome.report["tasks"]:
                result["candidate_path"] = str(candidate.relative_to(bench_root) if candidate.is_relative_to(bench_root) else candidate)
            reports.append(outcome.report)
            print(f"judge-agreement: {task_id}: {candidate.name} evaluated in {outcome.seconds:.1f}s", flush=True)
    return reports


def add_parser(sub: Any) -> None:
    """The subcommand's arguments."""
    parser = sub.add_parser("judge-agreement", help="confusion matrix, per requirement, of a judge's verdicts against the deterministic oracle's")
    parser.add_argument("tasks", nargs="*", help=f"task ids (default: {', '.join(FULL_STACK_TASKS)})")
    parser.add_argument("--judge", help="the judge model, as --bench-judge takes it (openai:<model>); its server from --judge-base-url or BACKENDBENCH_JUDGE_BASE_URL")
    parser.add_argument("--judge-base-url", help="the judge's OpenAI-compatible API root (key: BACKENDBENCH_JUDGE_API_KEY)")
    parser.add_argument("--bench-root", default=".", help="folder holding benchmarks/ and oracles/ (default: .)")
    parser.add_argument("--runtime", default="auto", choices=("auto", "docker", "process"))
    parser.add_argument("--no-mutants", action="store_true", help="judge the reference and alternates only")
    parser.add_argument("--max-mutants", type=int, metavar="N", help="judge only the first N mutants of each task's mutants.yaml")
    parser.add_argument("--no-alternates", action="store_true", help="judge the reference and mutants only")
    parser.add_argument("--workdir", help="where candidates and reports go (default: a temporary folder)")
    parser.add_argument("--reports", nargs="+", metavar="REPORT", help="compute from these report.json files (runs made with --bench-judge) instead of running")
    parser.add_argument("--json", action="store_true", help="print the matrices as JSON")


def run(args: argparse.Namespace) -> int:
    """Run (or read) the evaluations and print the matrices."""
    if args.reports:
        reports = [json.loads(Path(p).read_text(encoding="utf-8")) for p in args.reports]
    else:
        if not args.judge:
            raise HarnessError("judge-agreement needs --judge openai:<model> (or --reports of runs made with --bench-judge)")
        judge_args = [f"--bench-judge={args.judge}", *([f"--bench-judge-base-url={args.judge_base_url}"] if args.judge_base_url else [])]
        bench_root = Path(args.bench_root).resolve()
        tasks = list(args.tasks or FULL_STACK_TASKS)
        mutants = 0 if args.no_mutants else args.max_mutants
        if args.workdir:
            reports = run_agreement(bench_root, tasks, judge_args, args.runtime, Path(args.workdir).resolve(), mutants, not args.no_alternates)
        else:
            with tempfile.TemporaryDirectory(prefix="judge-agreement-") as folder:
                reports = run_agreement(bench_root, tasks, judge_args, args.runtime, Path(folder), mutants, not args.no_alternates)
    table = agreement_of(reports)
    if not table:
        raise HarnessError("no judge cases in the reports: run with --bench-judge on tasks that have oracles/<task>/judge/cases.yaml")
    if args.json:
        print(json.dumps({f"{t} {r}": {**a.cells, "undetermined": a.undetermined, "agreement": a.agreement, "kappa": a.kappa(), "disagreements": a.disagreements} for (t, r), a in table.items()}, indent=2))
    else:
        for line in render(table):
            print(line)
    return 0
