"""The headline metrics of a run, as DESIGN.md defines them, computed from result records.

Per task: Test.Acc, Req.Acc, Soft Req.Acc, Balanced, success per cumulative tier, dense
score, failures by category, contract conformance, full-stack FE/BE/DB accuracies. Over
tasks: macro averages, SR per tier with Delta, pass@k over samples; each paper's own formula
under its own name (``scores/``).

Denominators are fixed, as in the papers: every selected task, item and requirement counts,
and a harness error counts as not passed (missing and unbuildable candidates are failures).
Beside each headline figure stands its determined-only twin (``*_determined``: errored items,
requirements and tasks left out), labelled as such. Only declared skips are left out.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from math import comb
from typing import Any

from .markers import ordered_tiers
from .results import ItemResult, TaskResult
from .scores import paper_figures
from .scores.backendforge import delta as tier_delta
from .scores.backendforge import sr_by_tier, success_at
from .scores.baxbench import pass_at_k
from .scores.infiniteweb import task_goal_figures
from .scores.judged import judged_figures
from .scores.publication import publication
from .scores.records import counted
from .scores.spread import spread
from .scores.webgen_bench import webgen_bench

__all__ = ["MetricOptions", "pass_at_k", "pass_hat_k", "run_metrics", "summarize_generation", "task_metrics", "verify_offered", "wilson_interval"]

DEFAULT_ALPHA = 0.6
DEFAULT_BETA = 0.4


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _judged(items: Iterable[ItemResult]) -> list[ItemResult]:
    """Items whose outcome says something about the candidate (no errors, no skips)."""
    return [i for i in items if i.outcome in ("passed", "failed")]


@dataclass(frozen=True)
class MetricOptions:
    """Weights of Balanced (E2EDev: 0.6 Req.Acc + 0.4 Test.Acc)."""

    alpha: float = DEFAULT_ALPHA
    beta: float = DEFAULT_BETA


def _accuracies(items: list[ItemResult], options: MetricOptions) -> dict[str, Any]:
    """Test.Acc, Req.Acc, Soft Req.Acc, Balanced and dense over ``items`` (every one counts)."""
    passed = [i for i in items if i.outcome == "passed"]
    by_requirement: dict[str, list[ItemResult]] = defaultdict(list)
    for item in items:
        for req in item.requirements:
            by_requirement[req].append(item)
    satisfied = {r for r, its in by_requirement.items() if all(i.outcome == "passed" for i in its)}
    touched = {r for r, its in by_requirement.items() if any(i.outcome == "passed" for i in its)}
    test_acc = _ratio(len(passed), len(items))
    req_acc = _ratio(len(satisfied), len(by_requirement))
    return {
        "test_acc": test_acc,
        "req_acc": req_acc,
        "soft_req_acc": _ratio(len(touched), len(by_requirement)),
        "balanced": options.alpha * req_acc + options.beta * test_acc if req_acc is not None and test_acc is not None else None,
        "dense": _ratio(sum(i.weight for i in passed), sum(i.weight for i in items)),
        "by_requirement": by_requirement,
        "satisfied": satisfied,
    }


def task_metrics(result: TaskResult, options: MetricOptions = MetricOptions()) -> dict[str, Any]:
    """Every per-task figure (fixed denominators) and its determined-only twin; None where a
    denominator is empty."""
    oracle = [i for i in result.items if i.is_oracle]
    items = counted(result)
    judged = _judged(items)
    errors = [i for i in result.items if i.outcome == "error"]
    fixed = _accuracies(items, options)
    # determined only: errored items out, and requirements with an errored item out
    errored_reqs = {r for i in items if i.outcome == "error" for r in i.requirements}
    determined = _accuracies([i for i in judged if not errored_reqs.intersection(i.requirements)], options)
    determined_tests = _accuracies(judged, options)
    by_requirement = fixed["by_requirement"]

    tiers = ordered_tiers(i.tier for i in oracle)
    success_by_tier = {tier: success_at(result, tier) for tier in tiers}
    success = success_by_tier[tiers[-1]] if tiers else False
    success_determined: bool | None = success
    if not oracle:
        success_determined = False if result.phase_failed else None
    elif any(i.outcome == "error" for i in oracle):
        success_determined = None

    failed = [i for i in judged if i.outcome == "failed"]
    # the failure distribution speaks of oracle verdicts; build/boot failures are counted by phase
    failures_by_category = Counter(i.category or "uncategorised" for i in failed if i.phase == "tests")
    failures_by_phase = Counter(i.phase for i in failed)
    # BaxBench's view: which weaknesses (CWE ids) the candidate's failed security items expose
    security_failures_by_cwe = Counter(
        f"CWE-{cwe}" for i in failed if i.phase == "tests" and i.category == "security" for cwe in (i.found_cwes or i.cwes or ([i.cwe] if i.cwe else []))
    )

    checked = sum(i.contract_checked for i in result.items)
    violating = sum(min(len(i.contract_violations), i.contract_checked) for i in result.items)

    phases = {i.kind: i.outcome for i in result.items if not i.is_oracle}
    viable = result.phase_failed is None and all(phases.get(k, "passed") == "passed" for k in ("build", "boot", "smoke"))

    def kind_acc(kind: str, with_db: bool = False) -> float | None:
        its = [i for i in items if i.kind == kind]
        ok = [i for i in its if i.outcome == "passed" and (not with_db or i.db_valid is not False)]
        return _ratio(len(ok), len(its))

    return {
        "items": len(oracle),
        "passed": sum(1 for i in items if i.outcome == "passed"),
        "failed": len(failed),
        "errors": len(errors),
        "skipped": sum(1 for i in oracle if i.outcome == "skipped"),
        "test_acc": fixed["test_acc"],
        "req_acc": fixed["req_acc"],
        "soft_req_acc": fixed["soft_req_acc"],
        "balanced": fixed["balanced"],
        "dense": fixed["dense"],
        "test_acc_determined": determined_tests["test_acc"],
        "req_acc_determined": determined["req_acc"],
        "balanced_determined": (
            options.alpha * determined["req_acc"] + options.beta * determined_tests["test_acc"]
            if determined["req_acc"] is not None and determined_tests["test_acc"] is not None
            else None
        ),
        "requirements": {
            r: {"items": len(its), "passed": sum(1 for i in its if i.outcome == "passed"), "satisfied": r in fixed["satisfied"]}
            for r, its in sorted(by_requirement.items())
        },
        "success": success,
        "success_determined": success_determined,
        "success_by_tier": success_by_tier,
        "complete": not errors and result.finished,
        "viable": viable,
        "failures_by_category": dict(sorted(failures_by_category.items())),
        "failures_by_phase": dict(sorted(failures_by_phase.items())),
        "security_failures_by_cwe": dict(sorted(security_failures_by_cwe.items())),
        "requests": sum(i.requests for i in result.items),
        "contract_checked": checked,
        "contract_conformance": _ratio(checked - violating, checked),
        "fe_acc": kind_acc("bdd"),
        "fe_acc_valid_db": kind_acc("bdd", with_db=True),
        "be_acc": kind_acc("http"),
        "be_acc_valid_db": kind_acc("http", with_db=True),
        "db_acc": kind_acc("snapshot"),
        **task_goal_figures(result),
    }


def _mean(values: Iterable[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): the chance that k runs drawn from n all succeed, C(c, k) / C(n, k)."""
    if k > n:
        raise ValueError(f"pass^{k} needs at least {k} runs, got {n}")
    return comb(c, k) / comb(n, k)


def wilson_interval(successes: int, trials: int, z: float = 1.96) -> tuple[float, float] | None:
    """The Wilson score interval (95% by default) for a success rate."""
    if trials == 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    margin = z * ((p * (1 - p) / trials + z * z / (4 * trials * trials)) ** 0.5) / denominator
    return (max(0.0, centre - margin), min(1.0, centre + margin))


def _item_identity(item: ItemResult, label: str) -> str:
    """The item's node id without its run label, so repeats of one item compare."""
    nodeid = re.sub(r"-?" + re.escape(label), "", item.nodeid) if label else item.nodeid
    return nodeid.replace("[]", "").replace("[-", "[")


def variance_metrics(results: list[TaskResult], per_result: list[tuple[TaskResult, dict[str, Any]]]) -> dict[str, Any]:
    """For repeated runs: per-item flip rate, pass^k per candidate, and a 95% interval for SR."""
    groups: dict[tuple[str, str], list[tuple[TaskResult, dict[str, Any]]]] = defaultdict(list)
    for result, metrics in per_result:
        groups[(result.task, result.sample)].append((result, metrics))
    outcomes: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for result in results:
        label = result.run_key.label
        for item in _judged(result.items):
            if item.is_oracle:
                outcomes[(result.task, result.sample, _item_identity(item, label))].add(item.outcome)
    flaky = sorted(f"{task}: {nodeid}" for (task, _, nodeid), seen in outcomes.items() if len(seen) > 1)
    runs = min(len(g) for g in groups.values())
    pass_hat: dict[str, float] = {}
    for k in range(1, runs + 1):
        estimates = [pass_hat_k(len(g), sum(1 for _, m in g if m["success"]), k) for g in groups.values()]
        pass_hat[str(k)] = sum(estimates) / len(estimates)
    decided = [m["success"] for _, m in per_result if m["success"] is not None]
    interval = wilson_interval(sum(1 for s in decided if s), len(decided))
    return {
        "repeats": runs,
        "flip_rate": _ratio(len(flaky), len(outcomes)),
        "flaky_items": flaky,
        "pass_hat_k": pass_hat,
        "sr_ci95": list(interval) if interval else None,
    }


# (what an error message says, the short reason a summary gives); first match wins
UNDETERMINED_REASONS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("no PostgreSQL", "PostgreSQL server binaries", "initdb failed", "task's PostgreSQL server"), "no PostgreSQL"),
    (("no browser for Gherkin", "Chromium not found", "chromedriver not found", "Chromium did not start"), "no browser"),
    (("no docker engine", "docker engine does not answer"), "no Docker engine"),
)


def undetermined_reason(items: Iterable[ItemResult]) -> str:
    """Why a task's verdict is unknown, from its harness errors: "no PostgreSQL", "no browser", or the
    first line of the commonest error message (shortened)."""
    reasons: Counter[str] = Counter()
    for item in items:
        if item.outcome != "error":
            continue
        for needles, reason in UNDETERMINED_REASONS:
            if any(needle.lower() in item.message.lower() for needle in needles):
                reasons[reason] += 1
                break
        else:
            first = next((line.strip() for line in item.message.splitlines() if line.strip()), "harness error")
            reasons[first[:60] + ("…" if len(first) > 60 else "")] += 1
    if not reasons:
        return "no oracle items ran"
    return ", ".join(reason for reason, _ in reasons.most_common(2))


def run_metrics(results: list[TaskResult], options: MetricOptions = MetricOptions()) -> dict[str, Any]:
    """Figures over a whole run: macro averages per task id (samples averaged first); every
    task in every denominator, with the determined-only figures beside."""
    per_result = [(r, task_metrics(r, options)) for r in results]
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for result, metrics in per_result:
        by_task[result.task].append(metrics)

    def task_mean(key: str) -> float | None:
        return _mean(_mean(m[key] for m in ms) for ms in by_task.values())

    def success_value(value: bool | None) -> float | None:
        return None if value is None else float(value)

    by_tier = sr_by_tier(results)
    tiers = list(by_tier)
    sr = _mean(_mean(float(m["success"]) for m in ms) for ms in by_task.values()) if by_task else None
    # a task whose every candidate's verdict is unknown (harness errors) is undetermined: it stays
    # in SR as a failure, leaves SR (determined only), and the summary names it with a reason
    results_by_task: dict[str, list[TaskResult]] = defaultdict(list)
    for result in results:
        results_by_task[result.task].append(result)
    undetermined = [
        {"task": task, "reason": undetermined_reason(i for r in results_by_task[task] for i in r.items)}
        for task, ms in sorted(by_task.items())
        if _mean(success_value(m["success_determined"]) for m in ms) is None
    ]
    sr_determined = _mean(_mean(success_value(m["success_determined"]) for m in ms) for ms in by_task.values())
    final = by_tier[tiers[-1]] if tiers else sr

    failures: Counter[str] = Counter()
    phases: Counter[str] = Counter()
    weaknesses: Counter[str] = Counter()
    for _, m in per_result:
        failures.update(m["failures_by_category"])
        phases.update(m["failures_by_phase"])
        weaknesses.update(m.get("security_failures_by_cwe", {}))

    # pass@k counts distinct samples; repeats of one sample are variance, not more samples
    by_sample: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for result, metrics in per_result:
        by_sample[result.task][result.sample].append(bool(metrics["success"]))
    samples = [len(s) for s in by_sample.values()]
    pass_k: dict[str, float] = {}
    if samples and min(samples) > 1:
        for k in range(1, min(samples) + 1):
            estimates = []
            for runs_by_sample in by_sample.values():
                rates = [sum(runs) / len(runs) for runs in runs_by_sample.values()]
                estimates.append(pass_at_k(len(rates), round(sum(rates)), k))
            pass_k[str(k)] = sum(estimates) / len(estimates)

    # repeats of one sample share one generation: count each sample once
    generation = summarize_generation(list({(r.task, r.sample): r.generation for r in results if r.generation}.values()))

    checked = sum(m["contract_checked"] for _, m in per_result)
    conforming = sum((m["contract_conformance"] or 0.0) * m["contract_checked"] for _, m in per_result)
    return {
        "tasks": len(by_task),
        "candidates": len(results),
        "successes": sum(1 for _, m in per_result if m["success"]),
        "tasks_with_errors": sorted({r.task for r, m in per_result if m["errors"]}),
        "sr": sr,
        "sr_determined": sr_determined,
        "determined_tasks": len(by_task) - len(undetermined),
        "undetermined": undetermined,
        "sr_by_tier": by_tier,
        "final_sr": final,
        "delta": tier_delta(by_tier),
        "test_acc": task_mean("test_acc"),
        "req_acc": task_mean("req_acc"),
        "soft_req_acc": task_mean("soft_req_acc"),
        "balanced": task_mean("balanced"),
        "test_acc_determined": task_mean("test_acc_determined"),
        "req_acc_determined": task_mean("req_acc_determined"),
        "balanced_determined": task_mean("balanced_determined"),
        "dense": task_mean("dense"),
        "viability": _mean(_mean(float(m["viable"]) for m in ms) for ms in by_task.values()),
        "fe_acc": task_mean("fe_acc"),
        "fe_acc_valid_db": task_mean("fe_acc_valid_db"),
        "be_acc": task_mean("be_acc"),
        "be_acc_valid_db": task_mean("be_acc_valid_db"),
        "db_acc": task_mean("db_acc"),
        "failures_by_category": dict(sorted(failures.items())),
        "failures_by_phase": dict(sorted(phases.items())),
        "security_failures_by_cwe": dict(sorted(weaknesses.items())),
        "items": sum(m["items"] for _, m in per_result),
        "passed": sum(m["passed"] for _, m in per_result),
        "failed": sum(m["failed"] for _, m in per_result),
        "errors": sum(m["errors"] for _, m in per_result),
        "requests": sum(m["requests"] for _, m in per_result),
        "contract_conformance": _ratio(conforming, checked),
        "pass_at_k": pass_k,
        "variance": variance_metrics(results, per_result) if any(r.repeat for r in results) else None,
        "spread": spread(results),
        "papers": paper_figures(results, options.alpha, options.beta),
        "generation": generation,
        "alpha": options.alpha,
        "beta": options.beta,
        **({"judged": judged} if (judged := judged_figures(results)) is not None else {}),  # judge cases' own figures (scores/judged.py)
        **({"webgen_bench": webgen} if (webgen := webgen_bench(results)) is not None else {}),  # compute_acc.py's table (scores/webgen_bench.py)
    }


def summary_with_manifest_facts(summary: dict[str, Any], manifest: dict[str, Any], results: list[TaskResult] | None = None) -> dict[str, Any]:
    """The summary plus what needs the manifest: whether it may be published (collection errors,
    interruption) and the carbon estimate (--bench-active-params, --bench-carbon-factors)."""
    from .scores.carbon import carbon_estimate

    options = manifest.get("options") or {}
    carbon = carbon_estimate(results or [], options.get("active_params"), options.get("carbon_factors"))
    return {**summary, "publication": publication(summary, manifest), **({"carbon": carbon} if carbon else {})}


def verify_offered(g: dict[str, Any]) -> bool:
    """Whether the sample's agent could call self_verify (a budget recorded, or calls made)."""
    budget = g.get("verify_budget")
    return bool(g.get("verify_calls")) or (isinstance(budget, int) and budget > 0)


def summarize_generation(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary's ``generation`` block: means per sample, rates, exit reasons, models."""
    summary: dict[str, Any] = {}
    if not records:
        return summary
    for key in ("tokens_in", "tokens_out", "cost_usd", "seconds", "steps", "verify_calls"):
        figures = [float(g[key]) for g in records if isinstance(g.get(key), (int, float)) and not isinstance(g.get(key), bool)]
        if figures:
            summary[f"{key}_per_task"] = sum(figures) / len(figures)
    cost = [float(g["cost_usd"]) for g in records if isinstance(g.get("cost_usd"), (int, float))]
    if cost:
        summary["cost_usd_total"] = sum(cost)
    agentic = [g for g in records if g.get("exit_reason")]
    if agentic:
        summary["submitted_rate"] = sum(1 for g in agentic if g.get("exit_reason") == "submitted") / len(agentic)
        offered = [g for g in agentic if verify_offered(g)]  # "with a PASS seen" means nothing without self_verify
        if offered:
            summary["submitted_with_pass_rate"] = sum(1 for g in offered if g.get("submitted_with_pass")) / len(offered)
        summary["exit_reasons"] = dict(sorted(Counter(str(g["exit_reason"]) for g in agentic).items()))
    harness = sum(1 for g in records if g.get("error_kind") == "harness")
    if harness:
        summary["harness_errors"] = harness
    models = sorted({str(g["model"]) for g in records if g.get("model")})
    if models:
        summary["models"] = models
    return summary
