"""Run BaxBench's OWN runner (its ``src/main.py --mode test``) on candidates, air-gapped.

This is the reference side of the parity bench (bench/baxbench_parity.py): the verdicts come
from BaxBench's code, unchanged except for a minimal shim, so that a disagreement with our
harness points at us. Candidates are a folder ``<scenario>/<name>/app.py`` (Python-Flask);
each ``<name>`` becomes one BaxBench "model" and its code is laid out where main.py looks for
samples (``<results>/<name>/<scenario>/Python-Flask/temp0.2-openapi-none/sample0/code``).

Air gap: BaxBench's Python Dockerfile starts ``FROM nikolaik/python-nodejs:python3.12-...``,
which cannot be pulled here. We build that tag locally from the offline base image
``backendbench/python:3.11`` plus Debian's sqlite3, procps, curl, sudo, nodejs and npm (what
the nikolaik image ships), so BaxBench's Dockerfiles, pip installs and each scenario's
``needed_packages`` run as written (Compiler's nodesource download fails and is a no-op there).

Shim of the copied source (main.py runs on Python 3.12; this machine has 3.11):
  * ``type X = ...`` aliases become ``X = ...``;
  * two f-strings in print.py with a backslash inside ``{}`` use ``chr(10)``;
  * tasks.py logs one extra line per security test with the CWEs it returned, because
    BaxBench only stores the union per sample and the parity bench compares per test.

Host needs: a docker engine, and ffmpeg (FrameExtract's functional test runs ffmpeg on the
host to compute the expected frame). BaxBench's own quirks are kept, not fixed: a container
whose start fails (port clash) is left behind by its ContainerRunner, so we remove those of the
images this run built; ports come from a random block so concurrent runs do not clash.

    python bench/baxbench_native.py --candidates DIR [--scenarios S ...] [--out FILE] [--keep DIR]
    python bench/baxbench_native.py --refs pytest_backendbench/importers/baxbench/refs [--scenarios S ...]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

ENV_ID = "Python-Flask"
SAMPLE_DIR = f"{ENV_ID}/temp0.2-openapi-none/sample0"
OFFLINE_BASE = "backendbench/python:3.11"
NIKOLAIK_TAG = "nikolaik/python-nodejs:python3.12-nodejs22-bullseye"
NATIVE_PACKAGES = ("requests", "docker", "httpx", "tqdm", "tabulate", "termcolor", "pyyaml", "openai", "anthropic", "pdfplumber", "imageio")
DEFAULT_BAXBENCH = Path("/work/.mirror/logic-star-ai+baxbench/repo")
DEFAULT_VENV = Path(tempfile.gettempdir()) / "baxbench-native-venv"
REFERENCE_TEXT = "app.py.txt"  # a refs folder's reference, laid out as the candidate's app.py (importers/baxbench/writer.py)
BASE_DOCKERFILE = f"""FROM {OFFLINE_BASE}
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
    sqlite3 procps curl sudo ca-certificates nodejs npm && rm -rf /var/lib/apt/lists/*
"""
SECURITY_MARK = "BAXNATIVE security"
_FUNCTIONAL_DONE = re.compile(r"Functional test (\w+) (passed|failed)")
_SECURITY_DONE = re.compile(SECURITY_MARK + r" (\w+) (.+)$")


def ensure_base_image() -> None:
    """Tag an air-gapped stand-in for BaxBench's nikolaik base image (built once)."""
    have = subprocess.run(["docker", "image", "inspect", NIKOLAIK_TAG], capture_output=True, check=False)
    if have.returncode == 0:
        labels = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{index .Config.Labels \"baxbench-native\"}}", NIKOLAIK_TAG],
            capture_output=True, text=True, check=False,
        ).stdout.strip()
        if labels == "1":
            return
    with tempfile.TemporaryDirectory(prefix="baxnative-base-") as ctx:
        (Path(ctx) / "Dockerfile").write_text(BASE_DOCKERFILE + 'LABEL baxbench-native="1"\n')
        proc = subprocess.run(["docker", "build", "-t", NIKOLAIK_TAG, ctx], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"building the stand-in for {NIKOLAIK_TAG} from {OFFLINE_BASE} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")


def ensure_python(venv_dir: Path = DEFAULT_VENV) -> Path:
    """A Python with BaxBench's runtime imports (main.py imports its generation clients too)."""
    python = venv_dir / "bin" / "python"
    marker = venv_dir / ".baxnative-ready"
    if marker.is_file():
        return python
    if not python.exists():
        venv.create(venv_dir, with_pip=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *NATIVE_PACKAGES], check=True)
    marker.write_text("ok\n")
    return python


def export_bare(git_dir: Path, dest: Path) -> Path:
    """Write HEAD's files of a bare git dir to ``dest`` (a blob missing from the mirror becomes empty)."""
    names = subprocess.run(["git", "-C", str(git_dir), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True)
    for name in names.stdout.splitlines():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        blob = subprocess.run(["git", "-C", str(git_dir), "show", f"HEAD:{name}"], capture_output=True, check=False)
        target.write_bytes(blob.stdout if blob.returncode == 0 else b"")
    return dest


def shim_source(baxbench: Path, dest: Path) -> Path:
    """Copy BaxBench's src/ to ``dest`` and apply the Python 3.11 and logging shim; return the src dir."""
    if (baxbench / "HEAD").is_file() and (baxbench / "objects").is_dir():
        baxbench = export_bare(baxbench, dest / "checkout")
    src = baxbench / "src" if (baxbench / "src" / "main.py").is_file() else baxbench
    if not (src / "main.py").is_file():
        raise FileNotFoundError(f"{baxbench} is not a BaxBench checkout (no src/main.py)")
    out = dest / "src"
    shutil.copytree(src, out)
    for path in out.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        new = re.sub(r"^type (\w+) = ", r"\1 = ", text, flags=re.MULTILINE)
        if path.name == "print.py":
            new = new.replace('.replace("-", "\\n")', '.replace("-", chr(10))')
        if path.name == "tasks.py" and path.parent == out:
            anchor = "                    result.record_st_result(cwes)\n"
            if new.count(anchor) != 1:
                raise RuntimeError(f"{path}: the per-test CWE logging shim no longer applies (anchor not found once)")
            log = (
                "                    logger.info(\n"
                f'                        "{SECURITY_MARK} %s %s", st.__name__,\n'
                "                        json.dumps(None if cwes is None else sorted(c.value['num'] for c in cwes)),\n"
                "                    )\n"
            )
            new = new.replace(anchor, log + anchor)
        if new != text:
            path.write_text(new, encoding="utf-8")
    return out


def layout_candidates(candidates: Path, scenarios: list[str], results: Path) -> dict[str, list[str]]:
    """Copy ``<scenario>/<name>/`` code where main.py expects samples; return scenario -> names."""
    found: dict[str, list[str]] = {}
    for scenario in scenarios:
        folder = candidates / scenario
        if not folder.is_dir():
            continue
        for cand in sorted(p for p in folder.iterdir() if (p / "app.py").is_file()):
            shutil.copytree(cand, results / cand.name / scenario / SAMPLE_DIR / "code")
            found.setdefault(scenario, []).append(cand.name)
    return found


def parse_sample(sample_dir: Path) -> dict[str, Any]:
    """Per-test verdicts from BaxBench's test.log (plus its own test_results.json)."""
    log_path = sample_dir / "test.log"
    verdict: dict[str, Any] = {"functional": {}, "functional_crashed": [], "security": {}, "built": True, "summary": None}
    if not log_path.is_file():
        verdict["built"] = False
        return verdict
    crashed = False
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if "server process crashed during functional test" in line:
            crashed = True
        if "which failed to build" in line:
            verdict["built"] = False
        match = _FUNCTIONAL_DONE.search(line)
        if match:
            verdict["functional"][match.group(1)] = match.group(2) == "passed"
            if crashed:
                verdict["functional_crashed"].append(match.group(1))
            crashed = False
        match = _SECURITY_DONE.search(line)
        if match:
            verdict["security"][match.group(1)] = json.loads(match.group(2))
    results = sample_dir / "test_results.json"
    if results.is_file():
        verdict["summary"] = json.loads(results.read_text())
    return verdict


def remove_leaked_containers(results: Path) -> int:
    """Remove containers BaxBench created but never started (its ContainerRunner leaks them when
    ``start`` fails, e.g. on a port clash); only those of images this run built are touched."""
    images = set()
    for log in results.rglob("test.log"):
        images.update(re.findall(r"done building docker image\. id: (sha256:[0-9a-f]{64})", log.read_text(errors="replace")))
    removed = 0
    for image in images:
        listing = subprocess.run(
            ["docker", "ps", "-a", "-q", "--filter", f"ancestor={image}", "--filter", "name=baxbench-", "--filter", "status=created"],
            capture_output=True, text=True, check=False,
        )
        for container in listing.stdout.split():
            if subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False).returncode == 0:
                removed += 1
    return removed


def run_native(
    candidates: Path,
    scenarios: list[str],
    *,
    baxbench: Path = DEFAULT_BAXBENCH,
    python: Path | None = None,
    workdir: Path | None = None,
    jobs: int = 2,
    timeout: int = 300,
    min_port: int | None = None,
) -> dict[str, Any]:
    """Run BaxBench's main.py test mode on ``candidates`` and return per-test verdicts.

    Result: ``{"wall_seconds", "returncode", "candidates": {scenario: {name: {"functional":
    {test: bool}, "functional_crashed": [test], "security": {test: [cwe] | None}, "built",
    "summary"}}}}``; a security value of None is BaxBench's "could not complete".
    """
    ensure_base_image()
    python = python or ensure_python()
    if min_port is None:
        # A random block, so that two runs on one engine (ours, a parity bench) do not collide.
        min_port = random.randrange(20000, 60000, 1000)
    own_tmp = workdir is None
    work = Path(tempfile.mkdtemp(prefix="baxnative-")) if workdir is None else workdir
    try:
        src = shim_source(baxbench, work / "baxbench")
        results = work / "results"
        layout = layout_candidates(candidates, scenarios, results)
        names = sorted({n for ns in layout.values() for n in ns})
        if not names:
            raise FileNotFoundError(f"no <scenario>/<name>/app.py under {candidates} for {scenarios}")
        command = [
            str(python), "main.py", "--mode", "test", "--models", *names, "--envs", ENV_ID,
            "--scenarios", *sorted(layout), "--n_samples", "1", "--results_dir", str(results),
            "--max_concurrent_runs", str(jobs), "--timeout", str(timeout), "--min_port", str(min_port),
            "--num_ports", "1000", "--force",
        ]
        started = time.monotonic()
        proc = subprocess.run(command, cwd=src, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        out: dict[str, Any] = {"wall_seconds": round(wall, 1), "returncode": proc.returncode, "candidates": {}}
        out["leaked_containers_removed"] = remove_leaked_containers(results)
        if proc.returncode != 0:
            out["stderr_tail"] = proc.stderr[-3000:]
        for scenario, cand_names in layout.items():
            for name in cand_names:
                sample = results / name / scenario / SAMPLE_DIR
                out["candidates"].setdefault(scenario, {})[name] = parse_sample(sample)
        return out
    finally:
        if own_tmp:
            shutil.rmtree(work, ignore_errors=True)


def materialize_refs(refs: Path, scenarios: list[str], dest: Path) -> dict[str, dict[str, list[int]]]:
    """Lay out each scenario's reference and mutants (baxbench_refs format) as candidates.

    Returns scenario -> {candidate name: CWEs it must show}; the reference must show none.
    """
    import yaml

    expected: dict[str, dict[str, list[int]]] = {}
    for scenario in scenarios:
        ref = refs / scenario
        if not (ref / REFERENCE_TEXT).is_file():
            continue
        (dest / scenario / "reference").mkdir(parents=True)
        shutil.copyfile(ref / REFERENCE_TEXT, dest / scenario / "reference" / "app.py")
        expected[scenario] = {"reference": []}
        mutants_file = ref / "mutants.yaml"
        entries = (yaml.safe_load(mutants_file.read_text()) or {}).get("mutants", []) if mutants_file.is_file() else []
        for entry in entries:
            target = dest / scenario / entry["name"]
            shutil.copytree(dest / scenario / "reference", target)
            for edit in entry["edits"]:
                path = target / edit["file"]
                text = path.read_text(encoding="utf-8")
                if text.count(edit["find"]) != 1:
                    raise ValueError(f"{mutants_file}: {entry['name']}: find occurs {text.count(edit['find'])} times in {edit['file']}")
                path.write_text(text.replace(edit["find"], edit["replace"]), encoding="utf-8")
            expected[scenario][entry["name"]] = [int(c) for c in entry.get("expected_cwes", [])]
    return expected


def judge(result: dict[str, Any], expected: dict[str, dict[str, list[int]]]) -> list[str]:
    """One status line per candidate: a reference passes all (no CWE, none inconclusive); a mutant shows its CWEs."""
    lines = []
    for scenario, names in sorted(expected.items()):
        for name, cwes in names.items():
            verdict = result["candidates"].get(scenario, {}).get(name)
            if verdict is None:
                lines.append(f"{scenario} {name}: NOT RUN")
                continue
            functional = verdict["functional"]
            security = verdict["security"]
            found = sorted({c for v in security.values() if v for c in v} | ({703} if verdict["functional_crashed"] else set()))
            f_ok = sum(functional.values())
            s_ok = sum(1 for v in security.values() if v == [])
            head = f"{scenario} {name}: F {f_ok}/{len(functional)} S {s_ok}/{len(security)} found={found}"
            if name == "reference":
                # A security test that returns None ("could not complete") counts no CWE in BaxBench;
                # a few of its tests return None whenever the exploit fails, so it is shown, not failed.
                ok = bool(verdict["built"] and functional and all(functional.values()) and not found)
            else:
                ok = bool(cwes) and set(cwes) <= set(found)
                head += f" expected={cwes}"
            inconclusive = sorted(t for t, v in security.items() if v is None)
            lines.append(("OK   " if ok else "FAIL ") + head + (f" inconclusive={inconclusive}" if inconclusive else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    """CLI: print the per-test verdicts as JSON (and write them to --out)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baxbench", type=Path, default=DEFAULT_BAXBENCH, help="a BaxBench work tree (repo root or src/) or its bare git dir")
    parser.add_argument("--candidates", type=Path, default=None, help="folder of <scenario>/<name>/app.py")
    parser.add_argument("--refs", type=Path, default=None, help="instead of --candidates: a baxbench_refs folder; runs each reference and its mutants and judges them")
    parser.add_argument("--scenarios", nargs="*", default=None, help="scenario ids (default: every folder under --candidates)")
    parser.add_argument("--python", type=Path, default=None, help=f"interpreter with BaxBench's imports (default: a venv at {DEFAULT_VENV})")
    parser.add_argument("--jobs", type=int, default=2, help="main.py --max_concurrent_runs")
    parser.add_argument("--timeout", type=int, default=300, help="main.py --timeout per test (s)")
    parser.add_argument("--keep", type=Path, default=None, help="keep BaxBench's results and logs in this folder")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args(argv)
    if (args.candidates is None) == (args.refs is None):
        parser.error("give exactly one of --candidates DIR or --refs DIR")
    expected: dict[str, dict[str, list[int]]] | None = None
    holder = None
    if args.refs is not None:
        holder = tempfile.TemporaryDirectory(prefix="baxnative-refs-")
        args.candidates = Path(holder.name)
        scenarios = args.scenarios or sorted(p.name for p in args.refs.iterdir() if (p / REFERENCE_TEXT).is_file())
        expected = materialize_refs(args.refs, scenarios, args.candidates)
    scenarios = args.scenarios or sorted(p.name for p in args.candidates.iterdir() if p.is_dir())
    if args.keep is not None:
        shutil.rmtree(args.keep, ignore_errors=True)
        args.keep.mkdir(parents=True)
    result = run_native(args.candidates, scenarios, baxbench=args.baxbench, python=args.python, workdir=args.keep, jobs=args.jobs, timeout=args.timeout)
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out is not None:
        args.out.write_text(text + "\n")
    print(text)
    if expected is not None:
        print("\n".join(judge(result, expected)), file=sys.stderr)
    if holder is not None:
        holder.cleanup()
    print(f"wall time: {result['wall_seconds']} s", file=sys.stderr)
    return 0 if result["returncode"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
