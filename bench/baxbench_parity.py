"""Parity: BaxBench's own runner and this harness give the same verdict for every test.

On the same candidates (the secure Flask references of pytest_backendbench/importers/baxbench/refs
and their insecure mutants), it runs

- BaxBench's runner, its ``src/main.py --mode test`` (through bench/baxbench_native.py, against
  air-gapped images), and
- this harness: ``pytest --candidate ROOT --bench-root IMPORTED`` on the imported Flask tasks
  (``backendbench import baxbench --framework Python-Flask``), each candidate a sample,

then prints both verdict lists per test, the agreement and both wall times. A verdict is
``pass``/``fail`` for a functional test (``+crash`` when the server died during it: CWE-703)
and the sorted CWE list (``[]`` = secure) or ``None`` (could not complete) for a security test.

    python bench/baxbench_parity.py [--scenarios Login Forum ...] [--jobs 2] [--out parity.json]
        [--parity-out parity_experiment.json]

``--parity-out`` adds the run's figures on each side (functional tests passed, security tests
exhibiting a CWE, samples both correct and secure) to Harbor's parity record; each invocation adds
a run and the means +/- SEM are recomputed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from baxbench_native import DEFAULT_BAXBENCH, REFERENCE_TEXT, export_bare, materialize_refs, run_native

from pytest_backendbench.formats.parity import add_parity_run
from pytest_backendbench.importers.baxbench import import_baxbench
from pytest_backendbench.importers.baxbench.writer import task_id_of

REFS = REPO / "pytest_backendbench" / "importers" / "baxbench" / "refs"
FRAMEWORK = "Python-Flask"


def source_tree(baxbench: Path, work: Path) -> Path:
    """A BaxBench work tree (the mirror on this machine is a bare git dir)."""
    if (baxbench / "src").is_dir() or (baxbench / "scenarios").is_dir():
        return baxbench
    return export_bare(baxbench, work / "baxbench-src")


def harness_layout(candidates: Path, expected: dict[str, dict[str, list[int]]], modules: dict[str, str], root: Path) -> dict[tuple[str, str], tuple[str, str]]:
    """``<task>/sample-<k>/app.py`` for every candidate; (task, sample) -> (scenario, name)."""
    where = {}
    for scenario, names in expected.items():
        task = task_id_of({"module": modules[scenario]}, {"id": FRAMEWORK})
        for index, name in enumerate(sorted(names), start=1):
            sample = f"sample-{index}"
            shutil.copytree(candidates / scenario / name, root / task / sample)
            where[(task, sample)] = (scenario, name)
    return where


def run_harness(bench_root: Path, cand_root: Path, tasks: list[str], report_dir: Path, jobs: int) -> tuple[dict[str, Any], float, int]:
    """One pytest run over every task and sample; its report.json, wall seconds and exit code."""
    command = [sys.executable, "-m", "pytest", f"--bench-root={bench_root}", f"--candidate={cand_root}", "--bench-runtime=docker", f"--bench-report-dir={report_dir}", "-p", "no:cacheprovider", "-q", "--rootdir", str(bench_root)]
    command += [f"--bench-task={t}" for t in tasks]
    if jobs > 1:
        command += ["-n", str(jobs), "--dist", "loadgroup"]
    # only the selected tasks' folders are collected (the others' phase items would be deselected anyway)
    paths = [str(bench_root / part / t) for t in tasks for part in ("benchmarks", "oracles")]
    started = time.monotonic()
    proc = subprocess.run([*command, *paths], cwd=bench_root, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    report_file = report_dir / "report.json"
    if not report_file.is_file():
        raise RuntimeError(f"the harness wrote no report (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}")
    return json.loads(report_file.read_text()), wall, proc.returncode


def harness_verdicts(report: dict[str, Any], where: dict[tuple[str, str], tuple[str, str]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(scenario, name) -> {test: verdict} from the harness's items."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for task in report["tasks"]:
        key = where.get((task["task"], task.get("sample") or ""))
        if key is None:
            continue
        verdicts = out.setdefault(key, {})
        for item in task["items"]:
            name = item["nodeid"].split("::")[-1].split("[")[0]
            if not name.startswith("test_") or item["kind"] != "http":
                continue
            test = name.removeprefix("test_")
            if item["outcome"] == "error":
                verdicts[test] = "error: " + item["message"][:80]
            elif item["category"] == "security":
                verdicts[test] = None if item.get("inconclusive") else sorted(item.get("found_cwes") or [])
            else:
                crash = "+crash" if 703 in (item.get("found_cwes") or []) else ""
                verdicts[test] = ("pass" if item["outcome"] == "passed" else "fail") + crash
    return out


def native_verdicts(result: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(scenario, name) -> {test: verdict} from BaxBench's runner."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for scenario, names in result["candidates"].items():
        for name, verdict in names.items():
            tests: dict[str, Any] = {}
            for test, passed in verdict["functional"].items():
                tests[test] = ("pass" if passed else "fail") + ("+crash" if test in verdict["functional_crashed"] else "")
            for test, cwes in verdict["security"].items():
                tests[test] = None if cwes is None else sorted(cwes)
            out[(scenario, name)] = tests
    return out


def lookup(verdicts: dict[str, Any], test: str) -> Any:
    """A test's verdict; the harness names items test_<name> without BaxBench's own ``test_``."""
    for name in (test, test.removeprefix("test_"), "test_" + test):
        if name in verdicts:
            return verdicts[name]
    return "missing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baxbench", type=Path, default=DEFAULT_BAXBENCH, help="BaxBench's repository (work tree or bare git dir)")
    parser.add_argument("--scenarios", nargs="*", default=None, help="scenario ids (default: every one with a reference)")
    parser.add_argument("--jobs", type=int, default=2, help="parallel runs on each side (main.py --max_concurrent_runs, pytest -n)")
    parser.add_argument("--skip-native", type=Path, default=None, help="reuse BaxBench's verdicts from this JSON (bench/baxbench_native.py --out)")
    parser.add_argument("--harness-only", action="store_true", help="run only this harness and keep its report in --out's .harness.json (for a later --reuse-harness)")
    parser.add_argument("--reuse-harness", type=Path, default=None, help="reuse a .harness.json of an earlier --harness-only run")
    parser.add_argument("--out", type=Path, default=None, help="write both verdict lists and the figures here as JSON")
    parser.add_argument("--parity-out", type=Path, default=None, help="add this run's figures to this parity_experiment.json (Harbor's schema)")
    args = parser.parse_args(argv)
    scenarios = args.scenarios or sorted(p.name for p in REFS.iterdir() if (p / REFERENCE_TEXT).is_file())
    with tempfile.TemporaryDirectory(prefix="baxparity-") as tmp:
        work = Path(tmp)
        src = source_tree(args.baxbench, work)
        imported = work / "bench"
        summary = import_baxbench(src, imported, [FRAMEWORK])
        adapted = len(summary.tasks)
        print(summary.format().splitlines()[0], file=sys.stderr)
        candidates = work / "candidates"
        expected = materialize_refs(REFS, scenarios, candidates)
        module_of = {scenario: _module(src, scenario) for scenario in expected}
        native: dict[str, Any] | None = None
        if args.skip_native is not None:
            native = json.loads(args.skip_native.read_text())
        elif not args.harness_only:
            native = run_native(candidates, sorted(expected), baxbench=args.baxbench, jobs=args.jobs)
            if args.out is not None:  # kept apart, for --skip-native when only the harness side is re-run
                args.out.with_suffix(".native.json").write_text(json.dumps(native, indent=2) + "\n")
        cand_root = work / "harness-candidates"
        where = harness_layout(candidates, expected, module_of, cand_root)
        tasks = sorted({t for t, _ in where})
        if args.reuse_harness is not None:
            kept = json.loads(args.reuse_harness.read_text())
            report, harness_wall, code = kept["report"], kept["wall_s"], kept["exit"]
        else:
            report, harness_wall, code = run_harness(imported, cand_root, tasks, work / "report", args.jobs)
            if args.out is not None:
                args.out.with_suffix(".harness.json").write_text(json.dumps({"report": report, "wall_s": harness_wall, "exit": code}) + "\n")
    ours = harness_verdicts(report, where)
    if native is None:
        for key, tests in sorted(ours.items()):
            print(f"{key[0]:<22} {key[1]:<34} " + ", ".join(f"{t}={v}" for t, v in sorted(tests.items())))
        print(f"wall time: this harness {harness_wall:.1f} s (pytest exit {code}); BaxBench's runner not run (--harness-only)")
        return 0
    theirs = native_verdicts(native)
    rows, agree = [], 0
    for key in sorted(theirs.keys() | ours.keys()):
        mine, base = ours.get(key, {}), theirs.get(key, {})
        for test in sorted(base.keys() | {k for k in mine if lookup(base, k) == "missing"}):
            a, b = lookup(base, test), lookup(mine, test)
            same = a == b
            agree += same
            rows.append({"scenario": key[0], "candidate": key[1], "test": test, "baxbench": a, "harness": b, "agree": same})
    for row in rows:
        mark = "=" if row["agree"] else "!"
        print(f"{mark} {row['scenario']:<22} {row['candidate']:<34} {row['test']:<58} baxbench={row['baxbench']!s:<14} harness={row['harness']!s}")
    total = len(rows)
    print(f"\nagreement: {agree}/{total} tests ({100.0 * agree / total if total else 0:.1f}%) over {len(theirs)} candidates of {len(expected)} scenarios")
    native_wall = float(native.get("wall_seconds") or 0.0)
    ratio = native_wall / harness_wall if harness_wall else 0.0
    print(f"wall time: BaxBench's runner {native_wall:.1f} s, this harness {harness_wall:.1f} s (pytest exit {code}): {ratio:.2f}x")
    if args.parity_out is not None:
        records = add_parity_run(
            args.parity_out, adapter_name="backendbench-baxbench", benchmark_name="BaxBench", agent="oracle", model="none",
            adapted_benchmark_size=adapted, parity_benchmark_size=len(theirs), figures=parity_figures(rows),
            notes=f"candidates are BaxBench's {FRAMEWORK} references and their insecure mutants (Harbor's oracle agent: no model); "
                  "'original' is BaxBench's own runner (src/main.py --mode test), 'harbor' is this harness on the imported tasks; "
                  "parity_benchmark_size counts candidates, adapted_benchmark_size imported tasks",
            original_parity_repo="https://github.com/logic-star-ai/baxbench",
        )
        print(f"parity: {args.parity_out} ({records[-1]['number_of_runs']} run(s) in the record)")
    if args.out is not None:
        args.out.write_text(json.dumps({"rows": rows, "agree": agree, "total": total, "native_wall_s": native_wall, "harness_wall_s": round(harness_wall, 1), "ratio": round(ratio, 2)}, indent=2) + "\n")
    return 0 if agree == total else 1


def parity_figures(rows: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """{metric: (BaxBench's runner, this harness)} over the compared rows, in percent."""

    def side(name: str) -> tuple[float, float, float]:
        functional = [r[name] for r in rows if isinstance(r[name], str) and r[name].split("+")[0] in ("pass", "fail")]
        security = [r[name] for r in rows if isinstance(r[name], list)]
        by_candidate: dict[tuple[str, str], bool] = {}
        for r in rows:
            verdict, key = r[name], (r["scenario"], r["candidate"])
            good = (isinstance(verdict, str) and verdict == "pass") or verdict == []
            by_candidate[key] = by_candidate.get(key, True) and good
        return (100.0 * sum(v.startswith("pass") for v in functional) / max(len(functional), 1),
                100.0 * sum(bool(v) for v in security) / max(len(security), 1),
                100.0 * sum(by_candidate.values()) / max(len(by_candidate), 1))

    theirs, ours = side("baxbench"), side("harness")
    names = ("functional tests passed", "security tests exhibiting a CWE", "samples correct and secure")
    return {name: (theirs[i], ours[i]) for i, name in enumerate(names)}


def _module(src: Path, scenario: str) -> str:
    """BaxBench's module name of a scenario id (``PDFToText`` -> ``pdf_to_text``), read from its source."""
    root = src / "src" if (src / "src").is_dir() else src
    for path in sorted((root / "scenarios").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if f'id="{scenario}"' in text or f"id='{scenario}'" in text:
            return path.stem
    raise LookupError(f"no BaxBench scenario module defines id {scenario!r}")


if __name__ == "__main__":
    raise SystemExit(main())
