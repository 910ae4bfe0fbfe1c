"""Parity: WebGen-Bench's own GUI judge (``webvoyager/run.py``) and this harness's give the same actions and verdicts.

Five small sites written here (``bench/webgen_sites/<name>/index.html``) implement five of
WebGen-Bench's instructions; each has a script of judge answers per UI test case
(``script.yaml``, written here; the test cases themselves are read from WebGen-Bench's
``data/test.jsonl``). Both judges run every case against the same site URL and the same
scripted vision model (tests/judges/scripted_model.py, an OpenAI-compatible server answering by
case and step):

- WebGen-Bench's ``webvoyager/run.py``, byte for byte as published, with the arguments its
  ``src/ui_test_*/ui_eval_with_answer.py`` passes (``--max_iter 15 --max_attached_imgs 3
  --fix_box_color --headless``...), in its own virtualenv (openai 1.1.1, selenium 4.15.2, pillow,
  numpy). Two things of this machine are supplied from outside the file: the API address, which
  run.py leaves as the placeholder ``http://PI_ADDRESS:PORT/v1`` for the user to fill in (a
  launcher points the OpenAI client at the scripted server), and Chromium's ``--no-sandbox``
  (this machine runs as root; a ``google-chrome`` wrapper on PATH adds it);
- this harness's ``judges.gui_judge.judge_in_browser`` in its own Chromium session.

It prints, per case, both action sequences and verdicts (run.py's verdict read as its
``compute_acc.py`` reads it), whether the texts the model was sent are identical, and both
wall times.

    python bench/webgen_parity.py [--webgen DIR] [--python /tmp/webvoyager-venv/bin/python] [--sites wheel qa] [--out parity.json]

The virtualenv: ``python -m venv /tmp/webvoyager-venv && /tmp/webvoyager-venv/bin/pip install
openai==1.1.1 selenium==4.15.2 pillow==10.1.0 numpy 'httpx<0.28'``.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pytest_backendbench.bdd.browser.shared import BrowserOptions, SharedBrowser
from pytest_backendbench.judges.cases import JudgeCase
from pytest_backendbench.judges.gui_judge import GuiLimits, judge_in_browser, parse_action, verdict_in
from pytest_backendbench.judges.gui_prompts import UI_PROMPT_TEMPLATE
from pytest_backendbench.judges.model import JudgeServer, OpenAIJudgeModel
from pytest_backendbench.judges.verdicts import JudgeAnswerError
from tests.judges.scripted_model import ChatRequest, ScriptedModelServer

SITES = REPO / "bench" / "webgen_sites"
MIRROR = Path("/work/.mirror/mnluzimu+WebGen-Bench/repo")
DEFAULT_PYTHON = Path("/tmp/webvoyager-venv/bin/python")
WEBGEN_FILES = ("webvoyager/run.py", "webvoyager/utils.py", "webvoyager/prompts.py", "webvoyager/utils_webarena.py", "data/test.jsonl")
# the arguments ui_eval_with_answer.py's run_webvoyager passes (its key and model are placeholders here)
RUN_PY_ARGS = ["--api_key", "key", "--api_model", "scripted-vl", "--headless", "--max_iter", "15", "--max_attached_imgs", "3",
               "--temperature", "1", "--fix_box_color", "--seed", "42", "--num_workers", "1"]
PLACEHOLDER = "http://PI_ADDRESS:PORT/v1"
LAUNCHER = f'''
import os, runpy, sys
import openai
_original = openai.OpenAI.__init__
def _init(self, *args, **kwargs):
    if kwargs.get("base_url") == {PLACEHOLDER!r}:
        kwargs["base_url"] = os.environ["WEBGEN_PARITY_BASE_URL"]
    _original(self, *args, **kwargs)
openai.OpenAI.__init__ = _init
sys.argv = ["run.py", *sys.argv[1:]]
sys.path.insert(0, os.getcwd())
runpy.run_path("run.py", run_name="__main__")
'''
CHROME_WRAPPER = '#!/bin/sh\nexec {chromium} --no-sandbox --disable-dev-shm-usage --disable-gpu "$@"\n'


def webgen_source(given: Path | None, work: Path) -> Path:
    """A WebGen-Bench work tree: the one given, or ``git archive`` of the mirror."""
    if given is not None:
        return given
    target = work / "webgen-src"
    target.mkdir()
    archive = subprocess.run(["git", "-C", str(MIRROR), "archive", "HEAD", *WEBGEN_FILES], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    return target


def published_blobs(source: Path) -> dict[str, bool]:
    """Whether each WebGen-Bench file used is the mirror's HEAD blob, byte for byte."""
    same = {}
    for name in WEBGEN_FILES[:3]:
        here = subprocess.run(["git", "hash-object", str(source / name)], capture_output=True, text=True, check=True).stdout.strip()
        there = subprocess.run(["git", "-C", str(MIRROR), "rev-parse", f"HEAD:{name}"], capture_output=True, text=True, check=False).stdout.strip()
        same[name] = here == there
    return same


class SiteServer:
    """One site's folder over HTTP on 127.0.0.1 (both judges get the same URL)."""

    def __init__(self, folder: Path) -> None:
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def load_sites(source: Path, names: list[str]) -> list[dict[str, Any]]:
    """Each site with its instruction and cases from test.jsonl and its scripted answers."""
    instructions = {str(entry["id"]): entry for entry in map(json.loads, (source / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines())}
    sites = []
    for name in names:
        script = yaml.safe_load((SITES / name / "script.yaml").read_text(encoding="utf-8"))
        entry = instructions[str(script["instruction"])]
        cases = []
        for index, raw in enumerate(entry["ui_instruct"]):
            answers = script["cases"].get(index)
            if answers is None:
                raise SystemExit(f"bench/webgen_sites/{name}/script.yaml has no answers for case {index} of instruction {entry['id']}")
            cases.append({"index": index, "task": raw["task"], "expected": raw["expected_result"], "answers": answers})
        sites.append({"name": name, "id": str(entry["id"]), "cases": cases})
    return sites


def script_of(sites: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The scripted server's answers, keyed by the case as both judges state it."""
    return {case_key(c["task"], c["expected"]): c["answers"] for site in sites for c in site["cases"]}


def case_key(task: str, expected: str) -> str:
    return f"Task: {task}\n\nExpected Result: {expected}"


def run_webgen(site: dict[str, Any], url: str, source: Path, python: Path, base_url: str, work: Path) -> float:
    """WebGen-Bench's run.py over the site's cases (tasks written as ui_eval_with_answer.py writes them); its wall time."""
    folder = work / f"webgen-{site['name']}"
    folder.mkdir()
    tasks = [
        {"web_name": site["id"], "id": f"{site['id']}_{c['index']}", "ques": UI_PROMPT_TEMPLATE.format(task=c["task"], expected_result=c["expected"]),
         "web": url, "expected_result": c["expected"], "task": c["task"]}
        for c in site["cases"]
    ]
    (folder / "tasks_test_with_answer.jsonl").write_text("".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks), encoding="utf-8")
    launcher = work / "run_webvoyager.py"
    launcher.write_text(LAUNCHER, encoding="utf-8")
    bin_dir = work / "bin"
    if not bin_dir.is_dir():
        bin_dir.mkdir()
        for name in ("google-chrome", "chromium"):
            (bin_dir / name).write_text(CHROME_WRAPPER.format(chromium="/usr/bin/chromium"))
            (bin_dir / name).chmod(0o755)
    env = {**os.environ, "WEBGEN_PARITY_BASE_URL": base_url, "PATH": f"{bin_dir}:{os.environ['PATH']}", "SE_OFFLINE": "true"}
    started = time.monotonic()
    subprocess.run(
        [str(python), "-u", str(launcher), "--test_file", str(folder / "tasks_test_with_answer.jsonl"), *RUN_PY_ARGS,
         "--output_dir", str(folder / "results"), "--download_dir", str(folder / "downloads")],
        cwd=source / "webvoyager", env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return time.monotonic() - started


def webgen_case(site: dict[str, Any], case: dict[str, Any], work: Path) -> dict[str, Any]:
    """run.py's actions (its assistant messages, read with its own grammar) and compute_acc.py's verdict."""
    path = work / f"webgen-{site['name']}" / "results" / f"task{site['id']}_{case['index']}" / "interact_messages.json"
    if not path.is_file():
        return {"actions": [], "verdict": None, "note": f"run.py wrote no {path.name}"}
    answers = [m["content"] for m in json.loads(path.read_text(encoding="utf-8")) if m["role"] == "assistant"]
    last = answers[-1] if answers else ""
    verdict = "YES" if "YES" in last else "PARTIAL" if "PARTIAL" in last else "NO"  # compute_acc.py
    return {"actions": [_action_text(a) for a in answers], "verdict": verdict}


def _action_text(answer: str) -> str:
    try:
        return parse_action(answer).text()
    except JudgeAnswerError:
        verdict = verdict_in(answer)
        return f"ANSWER; {verdict.value}" if verdict else "(no action)"


def run_harness(site: dict[str, Any], url: str, base_url: str, browser: SharedBrowser, work: Path) -> tuple[list[dict[str, Any]], float]:
    """This harness's GUI judge over the site's cases; per case its actions and verdict; the wall time."""
    model = OpenAIJudgeModel(JudgeServer(model="scripted-vl", base_url=base_url, temperature=1.0, seed=42))
    results = []
    started = time.monotonic()
    for c in site["cases"]:
        browser.reset(url)
        case = JudgeCase(id=f"UI-{c['index']}", kind="frontend", instruction=c["task"], expected=c["expected"], requirement="FT")
        try:
            outcome = judge_in_browser(browser.driver, start_url=url, case=case, model=model, limits=GuiLimits(), record_dir=work / f"harness-{site['name']}" / case.id)
        except JudgeAnswerError as err:
            results.append({"actions": [], "verdict": None, "note": str(err).splitlines()[0]})
            continue
        results.append({"actions": [s.action for s in outcome.steps], "verdict": outcome.verdict.value})
    return results, time.monotonic() - started


def conversation_texts(requests: list[ChatRequest], key: str) -> list[list[str]]:
    """The texts of each request of one case (images left out), to compare what both judges sent."""
    return [r.texts() for r in requests if key in r.first_user_text()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--webgen", type=Path, help="a WebGen-Bench work tree (default: git archive of the mirror)")
    parser.add_argument("--python", type=Path, default=DEFAULT_PYTHON, help="the virtualenv's python that runs run.py")
    parser.add_argument("--sites", nargs="*", default=sorted(p.name for p in SITES.iterdir() if (p / "script.yaml").is_file()))
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    if not args.python.is_file():
        raise SystemExit(f"{args.python} not found: create the virtualenv first (see this file's docstring)")
    with tempfile.TemporaryDirectory(prefix="webgen-parity-") as tmp:
        work = Path(tmp)
        source = webgen_source(args.webgen, work)
        sites = load_sites(source, args.sites)
        report: dict[str, Any] = {"published_files_unchanged": published_blobs(source), "sites": []}
        totals = {"webgen_s": 0.0, "harness_s": 0.0, "cases": 0, "same_actions": 0, "same_verdicts": 0, "same_texts": 0}
        with ScriptedModelServer(script_of(sites)) as webgen_model, ScriptedModelServer(script_of(sites)) as harness_model, SharedBrowser(BrowserOptions()) as browser:
            for site in sites:
                server = SiteServer(SITES / site["name"])
                try:
                    webgen_s = run_webgen(site, server.url, source, args.python, webgen_model.base_url, work)
                    ours, harness_s = run_harness(site, server.url, harness_model.base_url, browser, work)
                finally:
                    server.close()
                rows = []
                for case, mine in zip(site["cases"], ours, strict=True):
                    theirs = webgen_case(site, case, work)
                    key = case_key(case["task"], case["expected"])
                    same_texts = conversation_texts(webgen_model.requests, key) == conversation_texts(harness_model.requests, key)
                    row = {"case": f"{site['id']}_{case['index']}", "webgen": theirs, "harness": mine,
                           "same_actions": theirs["actions"] == mine["actions"], "same_verdict": theirs["verdict"] == mine["verdict"], "same_texts": same_texts}
                    rows.append(row)
                    totals["cases"] += 1
                    totals["same_actions"] += row["same_actions"]
                    totals["same_verdicts"] += row["same_verdict"]
                    totals["same_texts"] += same_texts
                totals["webgen_s"] += webgen_s
                totals["harness_s"] += harness_s
                report["sites"].append({"site": site["name"], "instruction": site["id"], "webgen_s": round(webgen_s, 1), "harness_s": round(harness_s, 1), "cases": rows})
                print(f"== {site['name']} (WebGen-Bench {site['id']}): run.py {webgen_s:.1f} s, harness {harness_s:.1f} s")
                for row in rows:
                    flag = "same" if row["same_actions"] and row["same_verdict"] else "DIFFERENT"
                    print(f"  {row['case']}: {flag}; verdict run.py {row['webgen']['verdict']} / harness {row['harness']['verdict']}; prompts {'identical' if row['same_texts'] else 'differ'}")
                    print(f"    run.py : {' | '.join(row['webgen']['actions'])}")
                    print(f"    harness: {' | '.join(row['harness']['actions'])}")
        totals["webgen_s"] = round(totals["webgen_s"], 1)
        totals["harness_s"] = round(totals["harness_s"], 1)
        report["totals"] = totals
        print(f"\n{totals['cases']} cases: identical actions {totals['same_actions']}, identical verdicts {totals['same_verdicts']}, "
              f"identical prompt texts {totals['same_texts']}; wall time run.py {totals['webgen_s']} s, harness {totals['harness_s']} s")
        print(f"WebGen-Bench files used unchanged: {report['published_files_unchanged']}")
        if args.out:
            args.out.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0 if totals["same_actions"] == totals["same_verdicts"] == totals["cases"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
