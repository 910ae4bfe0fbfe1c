"""Benchmark: E2EDev's way of running Gherkin test cases against ours, on the same scenarios.

E2EDev's way (their run_behave_test.py): per test case, write features/features.feature and
features/steps/steps.py with its regex rewrites (file paths, time.sleep -> 0.5 except
projects 05, 21, 27, 37), start a new ``python -m behave`` subprocess whose step code starts
a new Chrome, call it passed when the output says "1 feature passed", then kill the Chrome
processes it left. The only addition is a features/environment.py that makes the bare
``webdriver.Chrome()`` of the step code start headless Debian Chromium (this machine has no
display); it is written once per test case, like the rest.

Our way: pytest_backendbench.bdd.scenarios.behave_runner in-process, one shared headless Chromium reset
between scenarios, the candidate served over HTTP, the same sleep policy.

Scenarios: the hand-written E2EDev-format fixtures in tests/importers/data (imported with
pytest_backendbench.importers), run against each project's reference app and against a
broken copy of project 05, so that pass and fail both occur. Prints both wall times, the
ratio, and whether every scenario got the same verdict both ways: once with the sleeps as the
step code and the sleep policy have them, once with every sleep cut to zero on both sides
(what is left is what the harness itself costs; the sleeps are the step code's own waiting).

    python bench/bdd_inprocess_vs_subprocess.py [--repeat N] [--source DIR]
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_backendbench.bdd.browser.shared import BASE_FLAGS, BrowserOptions, SharedBrowser
from pytest_backendbench.bdd.gherkin import find_steps, parse_feature_file
from pytest_backendbench.bdd.scenarios.behave_runner import ScenarioRunner, SleepPolicy
from pytest_backendbench.importers import import_e2edev
from pytest_backendbench.tasks import TaskCatalog

DEFAULT_SOURCE = REPO / "tests" / "importers" / "data" / "E2EDev_data"
E2EDEV_REAL_SLEEP = ("E2ESD_Bench_27", "E2ESD_Bench_37", "E2ESD_Bench_21", "E2ESD_Bench_05")

ENVIRONMENT_PY = textwrap.dedent(
    """
    # bench only: a bare webdriver.Chrome() starts headless Debian Chromium (no display here)
    import tempfile
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    _real_chrome = webdriver.Chrome


    def _headless_chrome(*args, **kwargs):
        options = webdriver.ChromeOptions()
        options.binary_location = {chromium!r}
        for flag in {flags!r} + ["--headless=new", "--window-size=1280,1024", "--user-data-dir=" + tempfile.mkdtemp(dir={marker!r})]:
            options.add_argument(flag)
        return _real_chrome(options=options, service=Service(executable_path={chromedriver!r}))


    webdriver.Chrome = _headless_chrome
    """
)


@dataclass(frozen=True)
class Case:
    """One test case run against one candidate."""

    label: str
    project: str
    feature: Path
    steps: Path
    line: int
    candidate: Path
    sleep: SleepPolicy


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def serve(folder: Path) -> tuple[http.server.ThreadingHTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def collect_cases(root: Path, source: Path) -> list[Case]:
    import_e2edev(source, root)
    catalog = TaskCatalog(root)
    broken = root / "broken-05"
    cases: list[Case] = []
    for task_id in catalog.task_ids():
        task = catalog.load(task_id)
        project = task.extra["e2edev"]["project"]
        sleep = SleepPolicy.parse(task.extra["e2edev"]["sleep_policy"])
        candidates = [("reference", task.reference_dir)]
        if project == "E2ESD_Bench_05":
            shutil.copytree(task.reference_dir, broken)
            script = broken / "script.js"
            script.write_text(script.read_text().replace("if (count > 0) {", "if (true) {"))  # decrement below zero
            candidates.append(("broken", broken))
        for name, folder in candidates:
            for feature in sorted((task.oracle_dir / "features").glob("*.feature")):
                (scenario,) = parse_feature_file(feature).scenarios
                (steps,) = find_steps(feature).modules
                cases.append(Case(f"{name}:{task_id}:{feature.stem}", project, feature, steps, scenario.line, folder, sleep))
    return cases


def run_ours(cases: list[Case], no_sleep: bool = False) -> tuple[float, dict[str, str], float]:
    """In-process behave runner, one shared browser (its start included), candidates over HTTP."""
    verdicts: dict[str, str] = {}
    servers: dict[Path, tuple[http.server.ThreadingHTTPServer, str]] = {}
    started = time.perf_counter()
    with SharedBrowser() as browser:
        browser.start()
        start_s = time.perf_counter() - started
        runners: dict[SleepPolicy, ScenarioRunner] = {}
        for case in cases:
            if case.candidate not in servers:
                servers[case.candidate] = serve(case.candidate)
            base_url = servers[case.candidate][1]
            sleep = SleepPolicy.capped(0) if no_sleep else case.sleep
            runner = runners.setdefault(sleep, ScenarioRunner(sleep))
            browser.reset(base_url)
            result = runner.run(case.feature, case.line, [case.steps], driver=browser.driver, base_url=base_url)
            verdicts[case.label] = "pass" if result.passed else "fail"
    elapsed = time.perf_counter() - started
    for server, _ in servers.values():
        server.shutdown()
        server.server_close()
    return elapsed, verdicts, start_s


def e2edev_rewrite(step_code: str, html_path: str, project: str, no_sleep: bool = False) -> str:
    """E2EDev's own rewrites, as their run_behave_test.py applies them (no_sleep: every sleep 0)."""
    step_code = re.sub(r'file_path\s*=\s*"[^"]*"', f'file_path = "{html_path}"', step_code)
    step_code = re.sub(r"file://[^\"']+", f"file://{html_path}", step_code)
    step_code = re.sub(r"file_path_placeholder\s*=\s*'[^']*'", f'file_path = "{html_path}"', step_code)
    if no_sleep:
        step_code = re.sub(r"time\.sleep\s*\(\s*\d+(\.\d+)?\s*\)", "time.sleep(0)", step_code)
    elif project not in E2EDEV_REAL_SLEEP:
        step_code = re.sub(r"time\.sleep\s*\(\s*\d+(\.\d+)?\s*\)", "time.sleep(0.5)", step_code)
    return step_code


def run_e2edev_way(cases: list[Case], workdir: Path, no_sleep: bool = False) -> tuple[float, dict[str, str]]:
    """A fresh `python -m behave` subprocess and a fresh browser per test case."""
    options = BrowserOptions()
    marker = tempfile.mkdtemp(prefix="bench-e2edev-", dir="/tmp")
    environment = ENVIRONMENT_PY.format(
        chromium=options.chromium_path(), chromedriver=options.chromedriver_path(), flags=list(BASE_FLAGS), marker=marker
    )
    env = dict(os.environ, SE_OFFLINE="true")
    verdicts: dict[str, str] = {}
    started = time.perf_counter()
    for case in cases:
        project_root = workdir / case.label.replace(":", "_")
        features = project_root / "features"
        shutil.rmtree(features, ignore_errors=True)
        (features / "steps").mkdir(parents=True)
        html = str((case.candidate / "index.html").resolve())
        (features / "features.feature").write_text(case.feature.read_text())
        (features / "steps" / "steps.py").write_text(e2edev_rewrite(case.steps.read_text(), html, case.project, no_sleep))
        (features / "environment.py").write_text(environment)
        proc = subprocess.run([sys.executable, "-m", "behave"], cwd=project_root, capture_output=True, text=True, env=env, check=False)
        verdicts[case.label] = "pass" if "1 feature passed" in proc.stdout else "fail"
        kill_leftovers(marker)  # E2EDev kills the Chrome processes a test case left behind
    elapsed = time.perf_counter() - started
    shutil.rmtree(marker, ignore_errors=True)
    return elapsed, verdicts


def kill_leftovers(marker: str) -> None:
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/cmdline", "rb") as cmdline:
                if marker.encode() in cmdline.read():
                    os.kill(int(entry.name), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            continue


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="run each way this many times, keep the best (default 1)")
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="E2EDev-format projects (default: the test fixtures)")
    parser.add_argument("--copies", type=int, default=1, help="run the scenario list this many times per way, as a longer suite would (default 1)")
    args = parser.parse_args(argv)
    identical = True
    with tempfile.TemporaryDirectory(prefix="bench-bdd-") as tmp:
        root = Path(tmp)
        cases = collect_cases(root / "bench", args.source) * args.copies
        for no_sleep in (False, True):
            ours_times, theirs_times, starts = [], [], []
            ours: dict[str, str] = {}
            theirs: dict[str, str] = {}
            for _ in range(args.repeat):
                elapsed, ours, start_s = run_ours(cases, no_sleep)
                ours_times.append(elapsed)
                starts.append(start_s)
                elapsed, theirs = run_e2edev_way(cases, root / "e2edev", no_sleep)
                theirs_times.append(elapsed)
            ours_s, theirs_s = min(ours_times), min(theirs_times)
            start_s = starts[ours_times.index(ours_s)]
            title = "sleeps cut to zero on both sides (harness cost only)" if no_sleep else "sleeps as written (E2EDev's sleep rules / task sleep policy)"
            print(f"== {title}: {len(cases)} scenarios")
            if not no_sleep:
                print(f"   {'scenario':40} {'E2EDev way':>10} {'ours':>6}")
                for label in dict.fromkeys(c.label for c in cases):
                    mark = "" if ours[label] == theirs[label] else "   <-- differs"
                    print(f"   {label:40} {theirs[label]:>10} {ours[label]:>6}{mark}")
            n = len(cases)
            print(f"   E2EDev way (subprocess + new browser per test case): {theirs_s:7.2f} s  ({theirs_s / n:.2f} s per scenario)")
            print(f"   ours (in-process runner + shared browser):           {ours_s:7.2f} s  ({ours_s / n:.2f} s per scenario)")
            steady = (ours_s - start_s) / n
            print(f"      of which the one browser start: {start_s:.2f} s; after it {steady:.2f} s per scenario")
            print(f"   ratio: ours is {theirs_s / ours_s:.1f}x faster in total, {theirs_s / n / steady:.1f}x per scenario once the browser runs"
                  + (f" (best of {args.repeat})" if args.repeat > 1 else ""))
            same = ours == theirs
            identical = identical and same
            print(f"   pass/fail per scenario identical: {'yes' if same else 'NO'}")
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
