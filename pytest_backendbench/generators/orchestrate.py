"""Generating candidates: a generator hook writes one workspace per task and sample.

``--bench-generate --bench-model=NAME`` runs before evaluation: each task's *visible* contract goes to the
first ``pytest_backendbench_generate`` implementation that answers for NAME, which writes a
candidate into an empty workspace. How the generation went (model, tokens, cost, seconds, or
the error) is recorded in the workspace's ``candidate.yaml``, so the report aggregates it and
a sample whose generation failed is evaluated as a failed build instead of aborting the run.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..errors import TaskFormatError
from ..llm.chat import GenerationError, ProviderError
from ..runkey import RunKey
from ..tasks import Task

OUTPUT_MARKER = ".backendbench-generated"
"""Written at the top of an output folder we generated into: only such a folder is overwritten."""

GENERATION_NUMBERS = ("tokens_in", "tokens_out", "cost_usd", "seconds")
MAX_ERROR_CHARS = 4000
TAIL_LINES = 30


class GenerationSetupError(Exception):
    """Generation cannot start: no generator answers for the model, or the output folder is not
    ours to overwrite. The plugin reports it as a usage error (nothing was evaluated)."""


@dataclass(frozen=True)
class GenerationJob:
    """One (task, sample) to generate, and where its workspace is."""

    task: Task
    sample: str
    workspace: Path

    @property
    def run_key(self) -> RunKey:
        """The run this job's candidate is evaluated as (its first repetition)."""
        return RunKey.of(self.task.id, self.sample)

    @property
    def key(self) -> str:
        """``task`` or ``task@sample-k``, as in reports."""
        return str(self.run_key)


def generate_candidates(
    hook: Any,
    tasks: list[Task],
    out_root: Path,
    model: str,
    samples: int,
    *,
    jobs: int = 1,
    progress: Callable[[str], None] | None = None,
    resume: bool = False,
    generated: set[RunKey] | None = None,
) -> list[Path]:
    """Let the generator for ``model`` write ``samples`` candidates per task below ``out_root``.

    Layout: ``out_root/<task>/`` when ``samples == 1``, else ``out_root/<task>/sample-<k>/``
    (what ``--candidate`` reads). ``hook`` is ``config.hook`` (or any pluggy hook relay with
    our hookspecs). ``jobs`` > 1 runs that many generations at once (generators must then be
    thread-safe; the built-in ones are). With ``resume`` a sample whose generation finished
    before (a candidate.yaml with a generation record that is not a harness error) is kept
    and skipped; ``generated`` (if given) receives the runs generated this time, whose earlier
    evaluation results are stale. Returns the workspaces in task, sample order.
    """
    if samples < 1:
        raise GenerationSetupError(f"--bench-samples {samples}: expected at least 1 sample per task")
    out_root = out_root.resolve()
    for task in tasks:
        check_visible(task)
        _refuse_inside_bench(out_root, task)
    _claim_output_root(out_root, model, samples)

    planned: list[GenerationJob] = []
    kept: set[Path] = set()
    for task in tasks:
        folder = out_root / task.id
        names = [""] if samples == 1 else [f"sample-{k}" for k in range(1, samples + 1)]
        workspaces = [folder / name if name else folder for name in names]
        if resume:
            kept.update(w for w in workspaces if generation_finished(w))
        if folder.exists() and not kept.intersection(workspaces):
            shutil.rmtree(folder)
        for name, workspace in zip(names, workspaces):
            if workspace not in kept:
                if workspace.exists():
                    _empty(workspace)
                workspace.mkdir(parents=True, exist_ok=True)
            planned.append(GenerationJob(task, name, workspace))

    def run(job: GenerationJob) -> Path:
        if job.workspace in kept:
            if progress is not None:
                progress(f"generate {job.key} with {model}: skipped, finished in an earlier run (--bench-resume)")
            return job.workspace
        if generated is not None:
            generated.add(job.run_key)
        line = generate_one(hook, job, model)
        if progress is not None:
            progress(line)
        return job.workspace

    if jobs <= 1:
        return [run(job) for job in planned]
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="backendbench-generate") as pool:
        return list(pool.map(run, planned))


def generate_one(hook: Any, job: GenerationJob, model: str) -> str:
    """Run the generator for one workspace and write its candidate.yaml; return a progress line.

    A generator exception is that sample's failure: the workspace is emptied and keeps only a
    candidate.yaml recording the error (no Dockerfile, no ``run:``), so it fails to build.
    ``GenerationSetupError`` (nobody answers for the model) propagates.
    """
    task = job.task
    started = time.monotonic()
    try:
        metadata = hook.pytest_backendbench_generate(task=task.visible, workspace=job.workspace, model=model)
    except GenerationSetupError:
        raise  # a usage error (an undefined cmd: agent, say): nothing can be generated
    except Exception as err:  # noqa: BLE001 - any generator failure is this sample's failed build, not the run's end
        seconds = time.monotonic() - started
        _empty(job.workspace)
        generation = _generation_record(model, getattr(err, "metadata", None) or {}, seconds)
        message = str(err).strip() or type(err).__name__
        if not isinstance(err, GenerationError):
            message = f"{type(err).__name__}: {message}"
        # the head says what failed, the tail (an agent CLI's last output lines) why
        generation["error"] = message if len(message) <= MAX_ERROR_CHARS else f"{message[:1000]}\n[...]\n{message[-(MAX_ERROR_CHARS - 1000):]}"
        # a provider outage or a harness bug is nobody's verdict on the model: re-runnable, never scored
        harness = isinstance(err, ProviderError) or not isinstance(err, GenerationError)
        generation["error_kind"] = "harness" if harness else "candidate"
        _write_candidate_yaml(job.workspace, {"task": task.id, "generation": generation})
        verdict = "HARNESS ERROR (re-run with --bench-resume)" if harness else "FAILED"
        lines = message.splitlines() or [""]
        # a harness error's further lines (an agent CLI's output tail) are what the user needs to fix it
        detail = "".join(f"\n    | {line}" for line in lines[1:][-TAIL_LINES:]) if harness else ""
        return f"generate {job.key} with {model}: {verdict} after {seconds:.1f}s: {lines[0][:200]}{detail}"
    seconds = time.monotonic() - started
    if metadata is None:
        raise GenerationSetupError(no_generator_message(hook, model))
    if not isinstance(metadata, dict):
        metadata = {"warning": f"the generator returned {type(metadata).__name__}, expected a dict of generation metadata"}
    data = _merge_candidate_yaml(job.workspace, task.id, _generation_record(model, metadata, seconds))
    _write_candidate_yaml(job.workspace, data)
    return f"generate {job.key} with {model}: done in {seconds:.1f}s{progress_figures(data['generation'])}"


def progress_figures(generation: dict[str, Any]) -> str:
    """The figures an agent's progress line adds (steps, verify calls, exit reason, tokens, cost)."""
    parts = []
    if generation.get("exit_reason"):
        parts.append(f"exit {generation['exit_reason']}")
    for key, label in (("steps", "steps"), ("verify_calls", "verify calls")):
        if isinstance(generation.get(key), int):
            parts.append(f"{generation[key]} {label}")
    tokens = [generation.get(k) for k in ("tokens_in", "tokens_out")]
    if all(isinstance(t, int) for t in tokens):
        parts.append(f"{tokens[0]}+{tokens[1]} tokens")
    if isinstance(generation.get("cost_usd"), (int, float)):
        parts.append(f"${generation['cost_usd']:.4f}")
    return f" ({', '.join(parts)})" if parts else ""


def generation_finished(workspace: Path) -> bool:
    """Whether an earlier run finished this sample's generation (for ``--bench-resume``).

    A recorded generation counts, even a failed one (the model's verdict); a harness error
    (provider outage, interrupted run) does not and is generated again.
    """
    file = workspace / "candidate.yaml"
    if not file.is_file():
        return False
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return False
    generation = data.get("generation") if isinstance(data, dict) else None
    return isinstance(generation, dict) and bool(generation.get("model")) and generation.get("error_kind") != "harness"


def no_generator_message(hook: Any, model: str) -> str:
    """What to say when no implementation answers for ``model``: the generators that exist."""
    known: list[str] = []
    for impl in reversed(hook.pytest_backendbench_generate.get_hookimpls()):  # in call order
        names = getattr(impl.plugin, "backendbench_models", None)
        known.extend(names if names else [f"a hook in {impl.plugin_name}"])
    listing = ", ".join(dict.fromkeys(known)) or "none"
    return (
        f"--bench-model {model!r}: no generator answers for this model. Generators: {listing}. "
        "Use one of those model names, or write a pytest_backendbench_generate hook (in a conftest.py "
        "or plugin) that handles it."
    )


def check_visible(task: Task) -> None:
    """Refuse to hand a generator a task whose visible files lie outside benchmarks/<task>/.

    A symlink in benchmarks/<task>/ pointing into oracles/ would otherwise leak the oracle.
    """
    root = task.benchmark_dir.resolve()
    visible = task.visible
    for path in (visible.spec_path, visible.openapi_path, *visible.assets):
        if path is None:
            continue
        if not path.resolve().is_relative_to(root):
            raise TaskFormatError(
                path,
                f"resolves to {path.resolve()}, outside {root}; a generator may read only the task's "
                "visible contract, so benchmarks/<task>/ must not link elsewhere (least of all into oracles/)",
            )


def _refuse_inside_bench(out_root: Path, task: Task) -> None:
    for hidden in (task.oracle_dir.parent.resolve(), task.benchmark_dir.parent.resolve()):
        if out_root.is_relative_to(hidden):
            raise GenerationSetupError(
                f"{out_root}: generated candidates must not be written below {hidden}; choose another --candidate folder"
            )


def _claim_output_root(out_root: Path, model: str, samples: int) -> None:
    """Create the output folder, or accept one we generated into before; never wipe anything else."""
    marker = out_root / OUTPUT_MARKER
    if out_root.exists():
        if not out_root.is_dir():
            raise GenerationSetupError(f"{out_root}: not a folder; --candidate with --bench-generate names the folder to generate into")
        if any(out_root.iterdir()) and not marker.is_file():
            raise GenerationSetupError(
                f"{out_root} is not empty and was not written by --bench-generate; generate into an empty or new folder "
                "(its task folders are replaced on every run)"
            )
    out_root.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"model": model, "samples": samples}) + "\n", encoding="utf-8")


def _generation_record(model: str, metadata: dict[str, Any], seconds: float) -> dict[str, Any]:
    """candidate.yaml's ``generation:`` from a generator's metadata (numbers checked, extras kept)."""
    record: dict[str, Any] = {"model": model}
    served = metadata.get("model")
    if served and served != model:
        record["served_model"] = str(served)
    warnings = []
    for key in GENERATION_NUMBERS:
        value = metadata.get(key)
        if value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0):
            record[key] = value
        else:
            record[key] = None
            warnings.append(f"{key}={value!r} is not a non-negative number")
    if record["seconds"] is None:
        record["seconds"] = round(seconds, 3)
    for key, value in metadata.items():
        if key not in record and key != "model" and isinstance(value, (str, int, float, bool)):
            record[key] = value
    if warnings:
        record["warning"] = "; ".join([*warnings, *([record["warning"]] if "warning" in record else [])])
    return record


def _merge_candidate_yaml(workspace: Path, task_id: str, generation: dict[str, Any]) -> dict[str, Any]:
    """Our task and generation, plus the ``run:`` the generator wrote (if it wrote a usable one)."""
    data: dict[str, Any] = {"task": task_id}
    file = workspace / "candidate.yaml"
    if file.is_file():
        try:
            written = yaml.safe_load(file.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError):
            written = None
            generation.setdefault("warning", "the candidate.yaml the generator wrote is not valid YAML; replaced")
        if isinstance(written, dict) and isinstance(written.get("run"), str):
            data["run"] = written["run"]
    data["generation"] = generation
    return data


def _write_candidate_yaml(workspace: Path, data: dict[str, Any]) -> None:
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)
    (workspace / "candidate.yaml").write_text(text, encoding="utf-8")


def _empty(workspace: Path) -> None:
    for entry in workspace.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
