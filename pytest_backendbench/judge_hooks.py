"""The judges' pytest wiring: the judge named by ``--bench-judge``, checked before collection, and
judge cases deselected (with one summary line) when none is named.

Registered for a benchmark session only (plugin.py's BENCH_PLUGINS). ``pytest_configure`` (called
when the module is registered) resolves the judge: ``openai:<model>`` on its own server
(``--bench-judge-base-url``, else ``--openai-base-url``'s), asked through the run's cache
(``<report dir>/judge-cache``). An unreachable server or a refused key is a usage error before
anything is collected; ``--bench-judge-replay`` skips that check and never reaches a server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .config import bench_config
from .errors import BackendBenchFormatError
from .judges.cases import cases_path, load_cases
from .judges.context import JudgeContext, judge_context, set_judge_context
from .judges.items import JudgeItem
from .judges.model import CACHE_FOLDER, JudgeCache, JudgeModel, JudgeServer, OpenAIJudgeModel, check_judge_server
from .llm.chat import DEFAULT_BASE_URL, GenerationError, OpenAISettings
from .session import bench_session, recorder_of
from .taskrun import session_registry

MODEL_PREFIX = "openai:"
DESELECTED_KEY = pytest.StashKey[int]()
"""How many judge items this process deselected for want of a judge."""


def judge_server(config: pytest.Config) -> JudgeServer | None:
    """The judge's server from the settings, or None without ``--bench-judge``; a malformed name is a usage error."""
    bench = bench_config(config)
    name = bench.judge
    if not name:
        return None
    if not name.startswith(MODEL_PREFIX) or not name[len(MODEL_PREFIX) :]:
        raise pytest.UsageError(f"--bench-judge {name!r}: expected openai:<model>, the model's name on an OpenAI-compatible server (e.g. openai:Qwen/Qwen2.5-VL-7B-Instruct)")
    base_url = bench.judge_base_url or bench.openai_base_url or DEFAULT_BASE_URL
    return JudgeServer(
        model=name[len(MODEL_PREFIX) :], base_url=base_url, api_key=bench.judge_api_key or None,
        temperature=bench.judge_temperature, seed=bench.judge_seed, timeout_s=bench.judge_timeout,
    )


def judge_price(text: str | None) -> tuple[float, float] | None:
    """``--bench-judge-price IN/OUT`` as numbers; a malformed one is a usage error."""
    try:
        return OpenAISettings(price=text).prices()
    except GenerationError as err:
        raise pytest.UsageError(f"--bench-judge-price: {err}") from err


def report_dir_of(config: pytest.Config) -> Path:
    """The run's report dir (where the judge cache lives), as the session resolved it."""
    registry = session_registry(config)
    if registry is not None:
        return Path(registry.artifacts_dir).parent
    report_dir = Path(bench_config(config).report_dir)
    return report_dir if report_dir.is_absolute() else Path(config.invocation_params.dir) / report_dir


def pytest_configure(config: pytest.Config) -> None:
    """Resolve the judge once; check its server before collection (controller only, not on replay)."""
    server = judge_server(config)
    if server is None:
        set_judge_context(config, None)
        return
    bench = bench_config(config)
    price = judge_price(bench.judge_price)
    offline = bool(bench.judge_replay)
    if not offline and not hasattr(config, "workerinput"):
        problem = check_judge_server(server)
        if problem is not None:
            raise pytest.UsageError(problem)
    cache = JudgeCache(report_dir_of(config) / CACHE_FOLDER)

    def model_for_repeat(repeat: int) -> JudgeModel:
        shifted = server if repeat <= 1 or server.seed is None else _with_seed(server, server.seed + repeat - 1)
        return OpenAIJudgeModel(shifted, cache, offline=offline)

    set_judge_context(config, JudgeContext(
        name=f"{MODEL_PREFIX}{server.model}", model_for_repeat=model_for_repeat, max_steps=bench.judge_max_steps,
        deadline_seconds=bench.judge_deadline, price=price,
    ))


def _with_seed(server: JudgeServer, seed: int) -> JudgeServer:
    from dataclasses import replace

    return replace(server, seed=seed)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a judge, judge cases are deselected (never errors or failures)."""
    if judge_context(config) is not None:
        return
    deselected = [item for item in items if isinstance(item, JudgeItem)]
    if not deselected:
        return
    items[:] = [item for item in items if not isinstance(item, JudgeItem)]
    config.hook.pytest_deselected(items=deselected)
    config.stash[DESELECTED_KEY] = len(deselected)


def judge_cases_on_disk(config: pytest.Config) -> int:
    """Judge cases × runs of the selected tasks, read from their files (an xdist controller collects nothing)."""
    bench = bench_session(config)
    registry = session_registry(config)
    if bench is None or registry is None:
        return 0
    total = 0
    for task_id in bench.task_ids:
        path = cases_path(bench.catalog.oracles_dir, task_id)
        if path.is_file():
            try:
                total += len(load_cases(path)) * len(registry.run_keys(task_id))
            except BackendBenchFormatError:  # reported by the file's collection, not here
                pass
    return total


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    """One line: the judged figures after the summary table, or how many judge cases were left out for want of a judge."""
    if hasattr(config, "workerinput"):
        return
    if judge_context(config) is not None:
        line = judged_line(config)
        if line:
            terminalreporter.write_line(line)
        return
    count = config.stash.get(DESELECTED_KEY, None)
    if count is None:
        count = judge_cases_on_disk(config) if config.pluginmanager.hasplugin("dsession") else 0
    if count:
        terminalreporter.write_line(f"{count} judge cases deselected: no --bench-judge")


def judged_line(config: pytest.Config) -> str | None:
    """``judged (model): Test.Acc …, Req.Acc … over N cases (YES/PARTIAL/NO/errors); judge tokens in/out, replayed``."""
    recorder = recorder_of(config)
    document = recorder.document if recorder is not None else None
    judged = (document or {}).get("summary", {}).get("judged")
    if not judged:
        return None
    usage = judged["usage"]

    def percent(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    cost = f", ${usage['cost_usd']:.4f}" if usage.get("cost_usd") is not None else ""
    return (
        f"judged ({usage['model']}): Test.Acc {percent(judged['judged_test_acc'])}, Req.Acc {percent(judged['judged_req_acc'])} over {judged['cases']} cases "
        f"({judged['yes']} YES / {judged['partial']} PARTIAL / {judged['no']} NO / {judged['errors']} errors); "
        f"judge tokens {usage['tokens_in']} in / {usage['tokens_out']} out, {usage['replayed']} of {usage['calls']} answers replayed{cost}"
    )
