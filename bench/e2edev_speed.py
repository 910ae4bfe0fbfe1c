"""Benchmark: a synthetic E2EDev-sized suite run the E2EDev way and our way, in one run.

The suite is generated here (not copied from E2EDev): ``--projects`` projects (default 46) in
E2EDev's published layout, about ``700 * --scale`` scenarios in all, each a small static app
(a counter, a list, a delayed status line; every fifth project has a bug in its reset button,
so both verdicts occur) with one Gherkin scenario and one steps module per test case, written
the way E2EDev's are: ``webdriver.Chrome()``, ``file://{file_path}``, ``time.sleep(n)`` between
steps, ``after_scenario`` quitting the driver. The sleeps follow E2EDev's rules: projects 05,
21, 27 and 37 keep theirs (1-3 s each), the others are cut to 0.5 s per call by both ways,
about 2.3 s of sleeping per scenario on average, as in the real data set.

E2EDev's way (its run_behave_test.py): per test case, features/ and steps.py written with its
regex rewrites, a fresh ``python -m behave`` subprocess whose step code starts a fresh Chrome,
passed when behave says "1 feature passed", leftover Chrome processes killed; one test case
after the other. (A features/environment.py makes the bare ``webdriver.Chrome()`` start
headless Debian Chromium, as in bench/bdd_inprocess_vs_subprocess.py: no display here.)

Our way: ``backendbench import e2edev`` on the same projects, then
``pytest --candidate=<references> --bench-runtime=process -n WORKERS --dist loadgroup``: the plugin
serves each reference as a static site, runs each scenario in-process through behave's runner
in its worker's shared headless Chromium (reset between scenarios: storage, cookies, fresh
page). Steps mostly sleep, so more workers (browsers) than cores pay off: ``--workers``
(default ``auto``: 12, fewer when the memory available would not hold a worker and its
Chromium, about 700 MB, each).

Prints both wall times, the ratio, whether every scenario got the same verdict, and the load
average at the start and end of each way: the machine is shared, and a ratio measured while
other work ran says so.

    python bench/e2edev_speed.py                      # the full suite, 46 projects, ~700 scenarios
    python bench/e2edev_speed.py --scale 0.1          # ~70 scenarios over the 46 projects
    python bench/e2edev_speed.py --projects 6 --scale 0.1 --workers 4   # a quick check
    python bench/e2edev_speed.py --keep DIR --only e2edev; python bench/e2edev_speed.py --keep DIR --only ours
                                                      # the two ways at different times, compared at the end
    python bench/e2edev_speed.py --keep DIR --only ours --workers 2 --sessions 4
                                                      # with DIR/source/E2EDev_data the real data set (a copy of E2EDev's
                                                      # E2EDev_data/): ours only, -n 2 and four browser sessions per worker
    python bench/e2edev_speed.py --keep ONE --only ours --workers 2 --sessions 1
    python bench/e2edev_speed.py --keep DIR --only ours --workers 2 --baseline ONE
                                                      # the README's -n 2 with the pool, compared scenario by scenario with
                                                      # a run without concurrency (one session per worker) kept in ONE
    python bench/e2edev_speed.py --keep DIR --only ours --workers 2 --remote-hosts off --baseline ONE
                                                      # on a machine without internet: remote APIs fail at once, as in ONE
                                                      # (run with the same flag); prints the machine's busy CPU-s too
    python bench/e2edev_speed.py --keep DIR --only ours --workers 2 --remote-hosts off --baseline ONE --baseline TWO
                                                      # two runs without concurrency: the scenarios they disagree on
                                                      # (timing races in the step code) are listed apart
    python bench/e2edev_speed.py --projects 6 --scale 0.1 --workers 2 --parity-out parity_experiment.json
                                                      # also add this run's pass rates (E2EDev's way, ours) to Harbor's
                                                      # parity record; each invocation adds a run, mean +/- SEM recomputed
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bdd_inprocess_vs_subprocess import ENVIRONMENT_PY, e2edev_rewrite, kill_leftovers

from pytest_backendbench.bdd.browser.shared import BASE_FLAGS, BrowserOptions
from pytest_backendbench.bdd.scheduling.pool_sizing import cpu_ticks
from pytest_backendbench.formats.parity import add_parity_run
from pytest_backendbench.importers import import_e2edev

FULL_SCENARIOS = 700
REAL_SLEEP_PROJECTS = {5, 21, 27, 37}

APP_HTML = """<!DOCTYPE html>
<html>
<head><meta charset="utf-8"><title>{title}</title>
<style>body {{ font-family: sans-serif; }} .done {{ color: green; }}</style></head>
<body>
  <h1 id="title">{title}</h1>
  <p>Count: <span id="count">0</span></p>
  <button id="increment">+</button> <button id="decrement">-</button> <button id="reset">Reset</button>
  <input id="item" placeholder="new item"> <button id="add">Add</button>
  <ul id="items"></ul>
  <button id="load">Load</button> <p id="status">idle</p>
  <script>
    var count = 0;
    function show() {{ document.getElementById("count").textContent = String(count); }}
    document.getElementById("increment").onclick = function () {{ count += 1; show(); }};
    document.getElementById("decrement").onclick = function () {{ if (count > 0) {{ count -= 1; }} show(); }};
    document.getElementById("reset").onclick = function () {{ count = {reset_value}; show(); }};
    document.getElementById("add").onclick = function () {{
      var input = document.getElementById("item");
      if (!input.value.trim()) {{ return; }}
      var li = document.createElement("li"); li.textContent = input.value.trim();
      document.getElementById("items").appendChild(li); input.value = "";
    }};
    document.getElementById("load").onclick = function () {{
      document.getElementById("status").textContent = "loading";
      setTimeout(function () {{ var s = document.getElementById("status"); s.textContent = "loaded"; s.className = "done"; }}, 300);
    }};
  </script>
</body>
</html>
"""

STEPS_HEAD = '''from behave import given, when, then
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from selenium.webdriver.support import expected_conditions as EC
import time

file_path = "/home/e2edev/E2EDev_data/{project}/source_projcet/index.html"


@given('the {app} page is open')
def step_open(context):
    context.driver = webdriver.Chrome()
    context.driver.get(f"file://{{file_path}}")
    time.sleep({s0})
'''

STEPS_TAIL = '''

def after_scenario(context, scenario):
    context.driver.quit()
'''

TEMPLATES = {
    "count": (
        "Scenario: [Normal] Clicking plus {n} times counts {n}\n    Given the {app} page is open\n    When the user clicks plus {n} times\n    Then the count shows {n}\n",
        '''
@when('the user clicks plus {n} times')
def step_click(context):
    for _ in range({n}):
        context.driver.find_element(By.ID, "increment").click()
    time.sleep({s1})

@then('the count shows {n}')
def step_count(context):
    time.sleep({s2})
    assert context.driver.find_element(By.ID, "count").text == "{n}"
''',
    ),
    "reset": (
        "Scenario: [Normal] Reset after {n} clicks shows 0\n    Given the {app} page is open\n    When the user clicks plus {n} times and then reset\n    Then the count shows 0\n",
        '''
@when('the user clicks plus {n} times and then reset')
def step_click(context):
    for _ in range({n}):
        context.driver.find_element(By.ID, "increment").click()
    time.sleep({s1})
    context.driver.find_element(By.ID, "reset").click()

@then('the count shows 0')
def step_count(context):
    time.sleep({s2})
    text = context.driver.find_element(By.ID, "count").text
    assert text == "0", f"count is {{text}} after reset"
''',
    ),
    "item": (
        'Scenario: [Normal] Adding "{word}" lists it\n    Given the {app} page is open\n    When the user adds the item "{word}"\n    Then the list contains "{word}"\n',
        '''
@when('the user adds the item "{word}"')
def step_add(context):
    context.driver.find_element(By.ID, "item").send_keys("{word}")
    time.sleep({s1})
    context.driver.find_element(By.ID, "add").click()

@then('the list contains "{word}"')
def step_list(context):
    time.sleep({s2})
    items = [li.text for li in context.driver.find_elements(By.CSS_SELECTOR, "#items li")]
    assert items == ["{word}"], f"items: {{items}}"
''',
    ),
    "load": (
        "Scenario: [Normal] Loading shows the loaded status\n    Given the {app} page is open\n    When the user clicks load\n    Then the status reads loaded\n",
        '''
@when('the user clicks load')
def step_load(context):
    context.driver.find_element(By.ID, "load").click()
    time.sleep({s1})

@then('the status reads loaded')
def step_status(context):
    WebDriverWait(context.driver, 5).until(EC.text_to_be_present_in_element((By.ID, "status"), "loaded"))
    time.sleep({s2})
    assert "done" in context.driver.find_element(By.ID, "status").get_attribute("class")
''',
    ),
    "empty": (
        "Scenario: [Error] An empty item is not added\n    Given the {app} page is open\n    When the user adds an empty item\n    Then the list is empty\n",
        '''
@when('the user adds an empty item')
def step_add(context):
    context.driver.find_element(By.ID, "add").click()
    time.sleep({s1})

@then('the list is empty')
def step_empty(context):
    time.sleep({s2})
    assert context.driver.find_elements(By.CSS_SELECTOR, "#items li") == []
''',
    ),
}
WORDS = ("milk", "bread", "tea", "apples", "rice", "soap", "pens", "paper")


def generate_suite(root: Path, projects: int, scale: float, seed: int = 11) -> int:
    """Write E2EDev-format projects under root/E2EDev_data; return the number of scenarios."""
    rng = random.Random(seed)
    total = max(projects, round(FULL_SCENARIOS * scale))
    sizes = [total // projects + (1 if i < total % projects else 0) for i in range(projects)]
    data = root / "E2EDev_data"
    for number, size in enumerate(sizes, start=1):
        project = f"E2ESD_Bench_{number:02d}"
        app = f"app{number:02d}"
        folder = data / project / "source_projcet"
        folder.mkdir(parents=True)
        buggy = number % 5 == 0
        (folder / "index.html").write_text(APP_HTML.format(title=f"Synthetic app {number:02d}", reset_value=1 if buggy else 0))
        (data / project / "prompt.txt").write_text(f"A synthetic counter and list page ({app}), generated by bench/e2edev_speed.py.\n")
        real_sleeps = number in REAL_SLEEP_PROJECTS
        requirements: dict[str, dict[str, object]] = {}
        for index in range(size):
            kind = list(TEMPLATES)[index % len(TEMPLATES)]
            scenario, body = TEMPLATES[kind]
            values = {"app": app, "n": 1 + index % 4, "word": WORDS[index % len(WORDS)], "project": project}
            # E2EDev's steps sleep 1-3 s per call; its runner cuts literal sleeps to 0.5 s except in 4 projects
            calls = rng.randint(2, 6) if not real_sleeps else 3
            sleeps = [rng.choice((1, 2, 3)) if real_sleeps else rng.choice((1, 2)) for _ in range(3)] + [1] * max(0, calls - 3)
            values.update(s0=sleeps[0], s1=sleeps[1], s2=sleeps[2])
            extra = "".join(f"    time.sleep({s})\n" for s in sleeps[3:])
            head = STEPS_HEAD.format(**values)
            if extra:
                head = head.rstrip("\n") + "\n" + extra
            gherkin = f"Feature: {kind} ({app})\n\n  " + scenario.format(**values)
            code = head + textwrap.dedent(body).format(**values) + STEPS_TAIL
            requirements[str(index + 1)] = {
                "requirement": {"description": f"{kind} behaviour, case {index + 1}"},
                "test_cases": [{"test_case": [gherkin], "step_code": code}],
            }
        tests = {"summary": {"overview": f"Synthetic app {number:02d}."}, "finegrained_rewith_test": requirements}
        (data / project / "requirment_with_tests.json").write_text(json.dumps(tests, indent=1))
    return sum(sizes)


def run_e2edev_way(data: Path, workdir: Path) -> tuple[float, dict[str, str]]:
    """E2EDev's runner: per test case a fresh `python -m behave` and a fresh Chrome, one after the other."""
    options = BrowserOptions()
    marker = tempfile.mkdtemp(prefix="bench-e2edev-", dir="/tmp")
    environment = ENVIRONMENT_PY.format(chromium=options.chromium_path(), chromedriver=options.chromedriver_path(), flags=list(BASE_FLAGS), marker=marker)
    env = dict(os.environ, SE_OFFLINE="true")
    verdicts: dict[str, str] = {}
    started = time.perf_counter()
    for project in sorted(data.iterdir()):
        tests = json.loads((project / "requirment_with_tests.json").read_text())
        html = str((project / "source_projcet" / "index.html").resolve())
        project_root = workdir / project.name
        for req, entry in tests["finegrained_rewith_test"].items():
            for number, case in enumerate(entry["test_cases"], start=1):
                features = project_root / "features"
                shutil.rmtree(features, ignore_errors=True)
                (features / "steps").mkdir(parents=True)
                (features / "features.feature").write_text(case["test_case"][0])
                (features / "steps" / "steps.py").write_text(e2edev_rewrite(case["step_code"], html, project.name))
                (features / "environment.py").write_text(environment)
                proc = subprocess.run([sys.executable, "-m", "behave"], cwd=project_root, capture_output=True, text=True, env=env, check=False)
                verdicts[f"{project.name.lower().replace('_', '-')}:R{req}_{number}"] = "pass" if "1 feature passed" in proc.stdout else "fail"
                kill_leftovers(marker)
    elapsed = time.perf_counter() - started
    shutil.rmtree(marker, ignore_errors=True)
    return elapsed, verdicts


def run_ours(data: Path, bench: Path, workers: int, sessions: str = "auto", extra: tuple[str, ...] = ()) -> tuple[float, dict[str, str], str]:
    """backendbench import e2edev, then the plugin with -n WORKERS --dist loadgroup (import included in the time)."""
    started = time.perf_counter()
    summary = import_e2edev(data, bench)
    candidates = bench / "candidates"
    for task in summary.tasks:
        shutil.copytree(task.oracle_dir / "reference", candidates / task.id)
    command = [
        sys.executable, "-m", "pytest", f"--candidate={candidates}", "--bench-runtime=process", f"-n{workers}", "--dist=loadgroup",
        f"--bench-bdd-sessions={sessions}", "--bench-report-dir=out", "-p", "no:cacheprovider", "-q", "--no-header", *extra,
    ]
    proc = subprocess.run(command, cwd=bench, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    verdicts: dict[str, str] = {}
    report_path = bench / "out" / "report.json"
    if report_path.is_file():
        report = json.loads(report_path.read_text())
        for task in report["tasks"]:
            for item in task["items"]:
                if item["kind"] == "bdd":
                    stem = item["nodeid"].split("::")[0].rsplit("/", 1)[-1].removesuffix(".feature")
                    verdicts[f"{task['task']}:{stem}"] = "pass" if item["outcome"] == "passed" else "fail"
    tail = "\n".join(proc.stdout.strip().splitlines()[-3:])
    if not verdicts and proc.returncode != 0:
        # pytest never got to run (a missing package, a usage error): say why instead of "0/0 passed"
        tail = "\n".join((proc.stderr.strip() or proc.stdout.strip() or f"pytest exited with {proc.returncode}").splitlines()[-3:])
    return elapsed, verdicts, tail


WORKER_MEMORY_MB = 700
MAX_WORKERS = 12


def auto_workers() -> int:
    """12 workers, fewer when MemAvailable cannot hold that many (pytest worker + Chromium each)."""
    try:
        meminfo = Path("/proc/meminfo").read_text()
        available_kb = int(next(line.split()[1] for line in meminfo.splitlines() if line.startswith("MemAvailable:")))
    except (OSError, StopIteration, ValueError):
        return MAX_WORKERS
    return max(1, min(MAX_WORKERS, available_kb // 1024 // WORKER_MEMORY_MB))


def busy_cpu_seconds() -> float:
    """CPU time the whole machine spent busy since boot (all cores; /proc/stat), in seconds."""
    ticks = cpu_ticks()
    return ticks[0] / os.sysconf("SC_CLK_TCK") if ticks is not None else 0.0


def cpu_stall_seconds() -> float | None:
    """Seconds since boot during which some runnable task waited for a CPU (PSI, /proc/pressure/cpu); None without it."""
    try:
        first = Path("/proc/pressure/cpu").read_text().split("\n", 1)[0].split()
        return int(next(field for field in first if field.startswith("total=")).split("=", 1)[1]) / 1e6
    except (OSError, StopIteration, ValueError):
        return None


class LoadSampler:
    """The 1-minute load average every 5 s while a way runs (mean and maximum), the CPU time it took,
    and how much of the run some runnable task waited for a CPU (what delays a page's timers and a
    step's WebDriver calls; the load average cannot tell a queue of waiting tasks from a busy CPU)."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self._busy_at_start = busy_cpu_seconds()
        self._stall_at_start = cpu_stall_seconds()
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(5.0):
            self.samples.append(os.getloadavg()[0])

    def stop(self) -> str:
        self._stop.set()
        self._thread.join()
        busy = f"{busy_cpu_seconds() - self._busy_at_start:.0f} CPU-s busy (whole machine)"
        stall = cpu_stall_seconds()
        if stall is not None and self._stall_at_start is not None:
            share = (stall - self._stall_at_start) / max(1e-9, time.monotonic() - self._started)
            busy += f", a runnable task waited for a CPU {100 * share:.0f} % of the time"
        if not self.samples:
            return f"load not sampled, {busy}"
        return f"load mean {sum(self.samples) / len(self.samples):.2f}, max {max(self.samples):.2f} over {len(self.samples)} samples, {busy}"


def compare_with_baselines(ours: dict[str, str], baseline_files: list[Path]) -> bool:
    """Print whether every scenario got the verdict the baseline runs (one session per worker) gave it.

    With two or more baselines, a scenario they disagree on has no verdict to keep: it is not
    reproducible without concurrency either, and is listed apart. True when no scenario differs
    from a verdict all baselines agree on.
    """
    records = [json.loads(path.read_text()) for path in baseline_files]
    bases = [record["verdicts"] for record in records]
    for record, base in zip(records, bases):
        print(f"baseline: {record['command']}, {record['seconds']:.1f} s, {sum(v == 'pass' for v in base.values())}/{len(base)} passed")
    labels = sorted(set(ours).union(*bases))
    unsettled = [label for label in labels if len({base.get(label) for base in bases}) > 1]
    changed = [label for label in labels if label not in unsettled and ours.get(label) != bases[0].get(label)]
    if len(bases) > 1:
        print(f"not reproducible without concurrency: the baselines disagree on {len(unsettled)} of {len(labels)}")
        for label in unsettled:
            print(f"   {label}: baselines {', '.join(base.get(label, '-') for base in bases)}, ours {ours.get(label, '-')}")
    what = "the verdict all baselines agree on" if len(bases) > 1 else "the baseline"
    print(f"verdicts identical to {what}: {'yes' if not changed else 'NO'} ({len(changed)} of {len(labels) - len(unsettled)} differ)")
    for label in changed:
        print(f"   {label}: baseline {bases[0].get(label, '-')}, ours {ours.get(label, '-')}")
    return not changed


def load_average() -> str:
    """The 1/5/15-minute load averages and the core count, e.g. ``load 3.12 2.80 2.10 on 2 cores``."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


def compare(scenarios: int, ours_s: float, ours: dict[str, str], theirs_s: float, theirs: dict[str, str]) -> bool:
    """Print both times, the ratio and the verdict comparison; True when the verdicts are identical."""
    print(f"per scenario: E2EDev way {theirs_s / scenarios:.2f} s, ours {ours_s / scenarios:.2f} s")
    print(f"ratio: ours is {theirs_s / ours_s:.1f}x faster (target >= 8x)")
    differing = sorted(k for k in set(ours) | set(theirs) if ours.get(k) != theirs.get(k))
    print(f"verdicts identical: {'yes' if not differing else 'NO'} ({len(theirs)} scenarios, {sum(v == 'pass' for v in theirs.values())} passed)")
    for label in differing[:20]:
        print(f"   {label}: E2EDev way {theirs.get(label, '-')}, ours {ours.get(label, '-')}")
    return not differing


def write_parity(path: Path, results: dict[str, tuple[float, dict[str, str]]], data: Path) -> None:
    """Add this run to Harbor's parity record: the share of scenarios passed, E2EDev's way against ours."""
    def rate(verdicts: dict[str, str]) -> float:
        return 100.0 * sum(v == "pass" for v in verdicts.values()) / len(verdicts) if verdicts else 0.0

    theirs, ours = results["e2edev"][1], results["ours"][1]
    records = add_parity_run(
        path, adapter_name="backendbench-e2edev", benchmark_name="E2EDev", agent="oracle", model="none",
        adapted_benchmark_size=len(list(data.iterdir())), parity_benchmark_size=len(theirs),
        figures={"scenario pass rate": (rate(theirs), rate(ours))},
        notes="candidates are the projects' reference apps (Harbor's oracle agent: no model); 'original' is E2EDev's own way "
              "(run_behave_test.py: behave and a new Chrome per scenario), 'harbor' is this harness (backendbench import e2edev + "
              "pytest); parity_benchmark_size counts scenarios, adapted_benchmark_size projects",
        original_parity_repo="https://github.com/SCUNLP/E2EDev",
    )
    print(f"parity: {path} ({records[-1]['number_of_runs']} run(s) in the record)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", type=int, default=46, help="projects in the suite (default 46, as E2EDev)")
    parser.add_argument("--scale", type=float, default=1.0, help="scenarios = 700 x SCALE, spread over the projects (default 1.0)")
    parser.add_argument("--workers", default="auto", help="our xdist workers, one shared Chromium each (default auto: 12, fewer if memory is short)")
    parser.add_argument("--sessions", default="auto", help="our browser sessions per worker (--bench-bdd-sessions; default auto)")
    parser.add_argument("--remote-hosts", choices=("live", "off"), default="live",
                        help="our --bench-remote-hosts (off: requests to remote APIs fail at once, as without internet)")
    parser.add_argument("--browser-arg", action="append", default=[], help="an extra Chromium flag for our way (repeatable)")
    parser.add_argument("--keep", type=Path, default=None, help="write the suite and both ways' results (ours.json, e2edev.json) here and keep them")
    parser.add_argument("--baseline", type=Path, action="append", default=[],
                        help="a --keep folder of an earlier 'ours' run (e.g. --sessions 1): compare the verdicts scenario by scenario;"
                             " repeat it to set apart the scenarios those runs disagree on")
    parser.add_argument("--parity-out", type=Path, default=None,
                        help="add this run's scenario pass rates (E2EDev's way, ours) to this parity_experiment.json (Harbor's schema)")
    parser.add_argument("--only", choices=("ours", "e2edev"), default=None,
                        help="run one way only and save its result in --keep; a later run of the other way (same --keep) prints the comparison")
    args = parser.parse_args(argv)
    if args.only and args.keep is None:
        parser.error("--only needs --keep (where the other way's result is found)")
    if args.workers == "auto":
        args.workers = auto_workers()
    elif not str(args.workers).isdigit() or int(args.workers) < 1:
        parser.error(f"--workers {args.workers}: a positive number or auto")
    args.workers = int(args.workers)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-e2edev-speed-"))
    data = root / "source" / "E2EDev_data"
    try:
        if data.is_dir():
            scenarios = sum(
                len(entry.get("test_cases") or [])
                for p in data.iterdir()
                for entry in json.loads((p / "requirment_with_tests.json").read_text())["finegrained_rewith_test"].values()
            )
            print(f"suite: {len(list(data.iterdir()))} projects, {scenarios} scenarios (reused from {data})", flush=True)
        else:
            scenarios = generate_suite(root / "source", args.projects, args.scale)
            print(f"suite: {args.projects} projects, {scenarios} scenarios (generated in {data})", flush=True)
        results: dict[str, tuple[float, dict[str, str]]] = {}
        for way in ("ours", "e2edev"):
            saved = root / f"{way}.json"
            if args.only not in (None, way):
                if saved.is_file():
                    record = json.loads(saved.read_text())
                    results[way] = (record["seconds"], record["verdicts"])
                    loads = f", {record['load_before']} -> {record['load_after']}" if "load_before" in record else ""
                    print(f"{way}: {record['seconds']:.1f} s, from {saved} ({record['command']}{loads})")
                continue
            load_before = load_average()
            print(f"{way}: starting, {load_before}", flush=True)
            sampler = LoadSampler()
            if way == "ours":
                shutil.rmtree(root / "ours", ignore_errors=True)
                extra = (f"--bench-remote-hosts={args.remote_hosts}", *(f"--browser-arg={arg}" for arg in args.browser_arg))
                seconds, verdicts, tail = run_ours(data, root / "ours", args.workers, args.sessions, extra)
                command = f"import + pytest -n {args.workers} --dist loadgroup --bench-bdd-sessions={args.sessions} {' '.join(extra)}"
                print(f"ours ({command}): {seconds:8.1f} s  {sum(v == 'pass' for v in verdicts.values())}/{len(verdicts)} passed  [{tail.splitlines()[-1] if tail else 'no output'}]", flush=True)
            else:
                shutil.rmtree(root / "e2edev", ignore_errors=True)
                seconds, verdicts = run_e2edev_way(data, root / "e2edev")
                command = "python -m behave + new Chrome per scenario, sequential"
                print(f"E2EDev way ({command}): {seconds:8.1f} s  {sum(v == 'pass' for v in verdicts.values())}/{len(verdicts)} passed", flush=True)
            load_after = load_average()
            load_during = sampler.stop()
            print(f"{way}: finished, {load_after}; during the run: {load_during}", flush=True)
            results[way] = (seconds, verdicts)
            if args.keep is not None:
                record = {"seconds": seconds, "verdicts": verdicts, "command": command, "finished": time.strftime("%Y-%m-%d %H:%M:%S"),
                          "load_before": load_before, "load_after": load_after, "load_during": load_during}
                saved.write_text(json.dumps(record))
        same_as_baseline = True
        if args.baseline and "ours" in results:
            same_as_baseline = compare_with_baselines(results["ours"][1], [folder / "ours.json" for folder in args.baseline])
        if len(results) < 2:
            return 0 if same_as_baseline else 1
        same = compare(scenarios, results["ours"][0], results["ours"][1], results["e2edev"][0], results["e2edev"][1])
        if args.parity_out is not None:
            write_parity(args.parity_out, results, data)
        return 0 if same and same_as_baseline else 1
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
