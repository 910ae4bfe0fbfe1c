"""The ``backendbench`` console script: everything that is not a test run.

report merge/compare, self-verify for agents, cleaning up after killed sessions, building
the offline base image, importing external benchmarks.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from ..errors import BackendBenchFormatError, HarnessError


def _cmd_report_merge(args: argparse.Namespace) -> int:
    from ..report.json_report import write_report
    from ..report.markdown import write_markdown
    from ..report.merge import merge_reports

    document = merge_reports([Path(p) for p in args.reports])
    out = Path(args.out)
    write_report(out, document)
    write_markdown(out, document)
    print(f"merged {len(args.reports)} reports ({document['summary']['tasks']} tasks) into {out / 'report.json'}")
    return 0


def _cmd_report_compare(args: argparse.Namespace) -> int:
    from ..report.compare import pair_document, pair_markdown
    from ..report.json_report import load_report
    from ..report.merge import compare_reports, leaderboard_markdown, report_label

    paths = [Path(p) for p in args.reports]
    board = compare_reports(paths)
    loaded = [(report_label(p, doc), p, doc) for p, doc in ((p, load_report(p)) for p in paths)]
    documents = [(label, doc) for label, _, doc in loaded]
    # every run against the first (the reference or the baseline model)
    pairs = [pair_document(documents[0][1], doc, documents[0][0], label) for label, doc in documents[1:]]
    markdown = leaderboard_markdown(board) + "".join("\n" + pair_markdown(pair) for pair in pairs)
    visuals: list[dict[str, object]] = []
    if args.visual:  # the pairwise visual judge, every run against the first (judges/visual_pairwise.py)
        from ..judges.visual_pairwise import compare_visually, visual_html, visual_markdown

        runs = [(label, doc, p if p.is_dir() else p.parent) for (label, doc), p in zip(documents, paths, strict=True)]
        cache = Path(args.out) / "judge-cache" if args.out else None
        visuals = compare_visually(runs, args.judge or "", base_url=args.judge_base_url, bench_root=Path(args.bench_root), cache_dir=cache)
        markdown += "".join("\n" + visual_markdown(visual) for visual in visuals)
    if args.out:
        from ..report.html import write_html
        from ..report.leaderboard import leaderboard_context

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "leaderboard.json").write_text(json.dumps({**board, "pairs": pairs, **({"visual": visuals} if visuals else {})}, indent=2) + "\n")
        (out / "leaderboard.md").write_text(markdown)
        write_html(out / "leaderboard.html", documents, leaderboard_context(board, pairs, loaded, out))
        if visuals:
            (out / "visual.html").write_text(visual_html(visuals), encoding="utf-8")
    print(markdown, end="")
    unpublishable = [row["run"] for row in board["rows"] if not row["publishable"]]
    if unpublishable and args.fail_on_errors:
        print(f"backendbench: not publishable (harness errors, collection errors or interrupted): {', '.join(unpublishable)}", file=sys.stderr)
        return 1
    return 0


def _cmd_report_suspects(args: argparse.Namespace) -> int:
    from ..report.suspects import SuspectThresholds, suspects_document, suspects_markdown

    thresholds = SuspectThresholds(args.max_pass_rate, args.min_sibling_rate, args.min_runs)
    document = suspects_document([Path(p) for p in args.reports], thresholds)
    markdown = suspects_markdown(document)
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "suspects.json").write_text(json.dumps(document, indent=2) + "\n")
        (out / "suspects.md").write_text(markdown)
    print(markdown, end="")
    return 1 if args.fail_on_suspects and document["suspects"] else 0


def _cmd_self_verify(args: argparse.Namespace) -> int:
    from ..agents.selfverify import self_verify

    verdict = self_verify(args.task, Path(args.candidate), Path(args.bench_root).resolve(), args.runtime, args.timeout)
    for line in verdict.lines(reward=args.reward):
        print(line)
    return 0 if verdict.passed else 1


def _cmd_clean(args: argparse.Namespace) -> int:
    from ..runtime.cleanup import remove_session_objects

    counts = remove_session_objects(session_id=args.session, images=args.images)
    print(f"removed {counts}")
    return 0


def _cmd_base_image(args: argparse.Namespace, rest: list[str]) -> int:
    from ..runtime.base_image import main as base_image_main

    return base_image_main(rest)


def _cmd_validate(args: argparse.Namespace) -> int:
    from ..tasks import TaskCatalog
    from .validate import render_table, validate_task

    catalog = TaskCatalog(Path(args.bench_root).resolve())
    task_ids = args.tasks or catalog.task_ids()
    unknown = [t for t in task_ids if t not in catalog.task_ids()]
    if unknown:
        raise HarnessError(f"unknown task(s) {', '.join(unknown)}; tasks: {', '.join(catalog.task_ids())}")
    rows = []
    for task_id in task_ids:
        print(f"validating {task_id} ...", file=sys.stderr, flush=True)
        rows.append(validate_task(catalog, task_id, args.runtime, run_mutants=not args.no_mutants, jobs=args.jobs))
    for line in render_table(rows):
        print(line)
    return 0 if all(r.ok for r in rows) else 1


def _cmd_catalogue(args: argparse.Namespace) -> int:
    from .catalogue import build_catalogue

    page, _ = build_catalogue(Path(args.bench_root).resolve())
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(page, encoding="utf-8")
        print(f"wrote {args.out}")
    else:
        print(page, end="")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    if args.source_kind == "baxbench":
        from ..importers.baxbench import import_baxbench

        print(import_baxbench(Path(args.source), Path(args.out), args.framework or None, args.safety_prompt))
        return 0
    if args.framework or args.safety_prompt != "none":
        raise HarnessError("--framework and --safety-prompt apply to `import baxbench` only")
    if args.source_kind == "harbor":
        from ..formats.harbor_import import import_harbor

        print(import_harbor(Path(args.source), Path(args.out)))
        return 0
    if args.source_kind == "webgen-bench":
        from ..importers.webgen_bench import import_webgen_bench

        print(import_webgen_bench(Path(args.source), Path(args.out)))
        return 0
    if args.source_kind != "e2edev":
        raise HarnessError(f"unknown benchmark {args.source_kind!r}; supported: e2edev, baxbench, webgen-bench")
    from ..importers.e2edev import import_e2edev

    summary = import_e2edev(Path(args.source), Path(args.out))
    print(summary)
    return 0


def _cmd_dispatch(args: argparse.Namespace) -> int:
    from ..dispatch.dispatcher import dispatch, summary_lines
    from ..dispatch.executors import Executor, LocalExecutor, SlurmExecutor, SlurmOptions

    pytest_args = list(args.pytest_args)
    if pytest_args[:1] == ["--"]:
        pytest_args = pytest_args[1:]
    report_dir = Path(args.report_dir).resolve()
    executor: Executor
    if args.executor == "slurm":
        extra = {}
        for option in args.slurm_option:
            key, sep, value = option.partition("=")
            if not sep or not key:
                raise HarnessError(f"--slurm-option {option!r}: expected KEY=VALUE, e.g. --slurm-option account=lab")
            extra[key.lstrip("-")] = value
        options = SlurmOptions(partition=args.partition, time_min=args.time, cpus=args.cpus, mem_gb=args.mem_gb, extra=extra)
        executor = SlurmExecutor(options, Path(args.job_folder).resolve() if args.job_folder else report_dir / "jobs")
    else:
        executor = LocalExecutor()
    result = dispatch(
        executor,
        pytest_args,
        args.shards,
        report_dir,
        cwd=Path.cwd(),
        retries=args.retries,
        durations=Path(args.durations) if args.durations else None,
        poll_s=args.poll,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    for line in summary_lines(result):
        print(line)
    return 0 if result.report is not None and not result.failed else 3


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for --help tests and docs)."""
    parser = argparse.ArgumentParser(prog="backendbench", description="pytest-backendbench tools beyond a test run")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("version", help="print the harness version")
    sub.add_parser("doctor", help="check every engine the harness can use (Docker, PostgreSQL, browser, disk) and how to fix each")

    report = sub.add_parser("report", help="merge shard reports, compare runs")
    report_sub = report.add_subparsers(dest="report_command", required=True)
    merge = report_sub.add_parser("merge", help="join shard reports into one")
    merge.add_argument("reports", nargs="+", help="report dirs or report.json files")
    merge.add_argument("--out", required=True, help="folder for the merged report.json and summary.md")
    compare = report_sub.add_parser("compare", help="the leaderboard across runs, then each run paired against the first (gained/lost tasks, McNemar, bootstrap)")
    compare.add_argument("reports", nargs="+", help="report dirs or report.json files")
    compare.add_argument("--out", help="folder for leaderboard.json, leaderboard.md and leaderboard.html")
    compare.add_argument("--fail-on-errors", action="store_true", help="exit 1 when a run is not publishable (harness errors left to re-run; for CI)")
    compare.add_argument("--visual", action="store_true", help="InfiniteWeb's pairwise visual judge: the runs' page screenshots (--bench-page-screenshot) shown to --judge on five dimensions; win/tie/lose rates (and visual.html with --out)")
    compare.add_argument("--judge", metavar="MODEL", help="--visual: the vision judge, openai:<model>")
    compare.add_argument("--judge-base-url", metavar="URL", help="--visual: the judge's OpenAI-compatible API root (default: BACKENDBENCH_JUDGE_BASE_URL, else BACKENDBENCH_OPENAI_BASE_URL)")
    compare.add_argument("--bench-root", default=".", metavar="DIR", help="--visual: where benchmarks/<task>/design.png, a task's design image, is looked for")

    suspects = report_sub.add_parser(
        "suspects", help="items that fail for most runs while the other items of their requirement pass (review before publishing)"
    )
    suspects.add_argument("reports", nargs="+", help="report dirs or report.json files (models, samples, alternates)")
    suspects.add_argument("--max-pass-rate", type=float, default=0.5, help="list items passing at most this share of runs (default 0.5)")
    suspects.add_argument("--min-sibling-rate", type=float, default=0.8,
                          help="... while their requirement's other items passed at least this share in those runs (default 0.8)")
    suspects.add_argument("--min-runs", type=int, default=2, help="items judged in fewer runs are not listed (default 2)")
    suspects.add_argument("--out", help="folder for suspects.json and suspects.md")
    suspects.add_argument("--fail-on-suspects", action="store_true", help="exit 1 when any item is listed (for CI)")

    verify = sub.add_parser("self-verify", help="coarse PASS/FAIL + phase for an agent (nothing about hidden items)")
    verify.add_argument("--task", required=True)
    verify.add_argument("--candidate", required=True)
    verify.add_argument("--bench-root", default=".", help="folder holding benchmarks/ and oracles/ (default: .)")
    verify.add_argument("--runtime", default="auto", choices=("auto", "docker", "process"))
    verify.add_argument("--reward", action="store_true", help="print the dense score instead (for RL loops)")
    verify.add_argument("--timeout", type=float, default=3600.0, metavar="S", help="give up after S seconds (default 3600)")

    clean = sub.add_parser("clean", help="remove containers, networks and volumes that killed sessions left")
    clean.add_argument("--session", default=None, help="only this session id (default: every session)")
    clean.add_argument("--images", action="store_true", help="also remove cached candidate and mock images")

    sub.add_parser("base-image", help="build the offline Python base image (debootstrap + docker import)", add_help=False)
    from .agent_image import add_parser as add_agent_image_parser

    add_agent_image_parser(sub)
    from .judge_agreement import add_parser as add_judge_agreement_parser

    add_judge_agreement_parser(sub)
    from .harbor import add_export_parser

    add_export_parser(sub)

    validate = sub.add_parser("validate", help="check tasks: structure, reference passes 100%%, every mutant caught")
    validate.add_argument("tasks", nargs="*", help="task ids (default: all)")
    validate.add_argument("--bench-root", default=".", help="folder holding benchmarks/ and oracles/ (default: .)")
    validate.add_argument("--runtime", default="auto", choices=("auto", "docker", "process"))
    validate.add_argument("--no-mutants", action="store_true", help="only structure and reference")
    validate.add_argument("--jobs", type=int, default=1, help="mutants evaluated at once (default 1)")

    catalogue = sub.add_parser("catalogue", help="the task catalogue page (Markdown) from the task files and collected oracles")
    catalogue.add_argument("--bench-root", default=".", help="folder holding benchmarks/ and oracles/ (default: .)")
    catalogue.add_argument("--out", help="write the page here (e.g. docs/catalogue.md) instead of printing it")

    disp = sub.add_parser("dispatch", help="split a run into shard jobs on local processes or Slurm, then merge their reports")
    disp.add_argument("--executor", choices=("local", "slurm"), default="local", help="where shard jobs run (default local)")
    disp.add_argument("--shards", type=int, required=True, help="number of shard jobs")
    disp.add_argument("--report-dir", default="backendbench-report", help="merged report here, shard reports in shard-K/ below it")
    disp.add_argument("--retries", type=int, default=2, help="resubmissions of a shard whose job died for infrastructure reasons")
    disp.add_argument("--durations", help="durations.json or report.json whose task times balance the shards (default: <report-dir>/durations.json)")
    disp.add_argument("--poll", type=float, default=2.0, help="seconds between state checks")
    disp.add_argument("--partition", help="slurm: partition")
    disp.add_argument("--time", type=int, default=120, help="slurm: time limit per job in minutes (default 120)")
    disp.add_argument("--cpus", type=int, default=2, help="slurm: CPUs per job (default 2)")
    disp.add_argument("--mem-gb", type=float, help="slurm: memory per job in GB")
    disp.add_argument("--slurm-option", action="append", default=[], metavar="KEY=VALUE", help="slurm: extra #SBATCH --KEY=VALUE (repeatable)")
    disp.add_argument("--job-folder", help="slurm: submitit's folder, on a filesystem the nodes share (default: <report-dir>/jobs)")
    disp.add_argument("pytest_args", nargs=argparse.REMAINDER, help="-- then the pytest arguments of the run")

    imp = sub.add_parser("import", help="convert an external benchmark into this task format")
    imp.add_argument("source_kind", choices=("e2edev", "baxbench", "webgen-bench", "harbor"))
    imp.add_argument("source", help="the external benchmark's checkout")
    imp.add_argument("--out", required=True, help="bench root to write (benchmarks/, oracles/)")
    imp.add_argument("--framework", action="append", default=[], metavar="NAME", help="baxbench: a framework to import, e.g. Python-Flask (repeatable; default: every one that builds here)")
    imp.add_argument("--safety-prompt", choices=("none", "generic", "specific"), default="none", help="baxbench: which of BaxBench's safety prompts spec.md carries (default none)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``backendbench``; user errors print one line and exit 2."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv[:1] == ["base-image"]:
        return _cmd_base_image(argparse.Namespace(), argv[1:])
    args = parser.parse_args(argv)
    try:
        if args.command == "version":
            from .. import __version__

            print(__version__)
            return 0
        if args.command == "doctor":
            from .doctor import main as doctor_main

            return doctor_main()
        if args.command == "report":
            commands = {"merge": _cmd_report_merge, "compare": _cmd_report_compare, "suspects": _cmd_report_suspects}
            return commands[args.report_command](args)
        if args.command == "self-verify":
            return _cmd_self_verify(args)
        if args.command == "clean":
            return _cmd_clean(args)
        if args.command == "catalogue":
            return _cmd_catalogue(args)
        if args.command == "validate":
            return _cmd_validate(args)
        if args.command == "import":
            return _cmd_import(args)
        if args.command == "dispatch":
            return _cmd_dispatch(args)
        if args.command == "judge-agreement":
            from .judge_agreement import run as judge_agreement_run

            return judge_agreement_run(args)
        if args.command == "export":
            from .harbor import run_export

            return run_export(args)
        if args.command == "agent-image":
            from .agent_image import run as agent_image_run

            return agent_image_run(args)
    except (HarnessError, BackendBenchFormatError) as err:
        print(f"backendbench: error: {err}", file=sys.stderr)
        return 2
    parser.error(f"unknown command {args.command}")
    return 2

