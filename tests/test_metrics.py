"""Metric arithmetic against hand-computed expectations (DESIGN.md's definitions)."""

from __future__ import annotations

import pytest

from pytest_backendbench.metrics import MetricOptions, pass_at_k, run_metrics, task_metrics
from pytest_backendbench.results import ItemResult, TaskResult


def item(name: str, outcome: str, reqs: list[str], tier: str = "base", weight: float = 1.0, category: str = "state", kind: str = "http", phase: str = "tests") -> ItemResult:
    return ItemResult(nodeid=name, task="t", candidate="t", kind=kind, outcome=outcome, phase=phase, requirements=reqs, category=category, tier=tier, weight=weight)


def phases(outcome: str = "passed") -> list[ItemResult]:
    return [item(k, outcome, [], kind=k) for k in ("build", "boot", "smoke")]


def task(items: list[ItemResult], name: str = "t", sample: str = "", phase_failed: str | None = None) -> TaskResult:
    for i in items:
        i.task = name
    return TaskResult(task=name, candidate=f"{name}@{sample}" if sample else name, sample=sample, items=items, finished=True, phase_failed=phase_failed)


def test_partial_requirements_tiers_and_weights() -> None:
    result = task(
        phases()
        + [
            item("a", "passed", ["R1"]),
            item("b", "failed", ["R1", "R2"], weight=3.0, category="authorization"),
            item("c", "passed", ["R2"]),
            item("d", "passed", ["R3"], tier="r1"),
            item("e", "failed", ["R3"], tier="r2", category="validation"),
        ]
    )
    m = task_metrics(result)
    assert m["test_acc"] == pytest.approx(3 / 5)
    assert m["req_acc"] == pytest.approx(0 / 3)  # R1 and R2 share the failed item b; R3 has e
    assert m["soft_req_acc"] == pytest.approx(3 / 3)
    assert m["balanced"] == pytest.approx(0.6 * 0 + 0.4 * 0.6)
    assert m["dense"] == pytest.approx(3 / 7)
    assert m["success_by_tier"] == {"base": False, "r1": False, "r2": False}
    assert m["failures_by_category"] == {"authorization": 1, "validation": 1}
    assert m["viable"] is True


def test_security_failures_are_counted_per_cwe() -> None:
    idor = item("idor", "failed", ["R1"], category="security")
    idor.cwe = 639
    mass = item("mass", "failed", ["R1"], category="security")
    mass.cwe = 915
    fixed = item("fixed", "passed", ["R1"], category="security")
    fixed.cwe = 915
    plain = item("plain", "failed", ["R1"], category="validation")
    m = task_metrics(task(phases() + [idor, mass, fixed, plain]))
    assert m["security_failures_by_cwe"] == {"CWE-639": 1, "CWE-915": 1}
    assert run_metrics([task(phases() + [idor, plain], "a"), task(phases() + [mass], "b")])["security_failures_by_cwe"] == {"CWE-639": 1, "CWE-915": 1}


def test_tier_attrition_and_delta() -> None:
    strong = task(phases() + [item("a", "passed", ["R1"]), item("b", "passed", ["R1"], tier="r1"), item("c", "passed", ["R1"], tier="r2")], "strong")
    mid = task(phases() + [item("a", "passed", ["R1"]), item("b", "passed", ["R1"], tier="r1"), item("c", "failed", ["R1"], tier="r2")], "mid")
    weak = task(phases() + [item("a", "passed", ["R1"]), item("b", "failed", ["R1"], tier="r1"), item("c", "passed", ["R1"], tier="r2")], "weak")
    bad = task(phases() + [item("a", "failed", ["R1"]), item("b", "passed", ["R1"], tier="r1")], "bad")
    s = run_metrics([strong, mid, weak, bad])
    assert s["sr_by_tier"] == {"base": 0.75, "r1": 0.5, "r2": 0.25}
    assert s["final_sr"] == 0.25
    assert s["delta"] == pytest.approx((0.25 - 0.75) / 0.75)
    assert s["sr"] == 0.25


def test_build_failure_and_missing_candidate_stay_in_the_denominator() -> None:
    ok = task(phases() + [item("a", "passed", ["R1"])], "ok")
    unbuildable = task([item("build", "failed", [], kind="build", phase="build"), item("a", "failed", ["R1"], phase="build")], "unbuildable", phase_failed="build")
    missing = task([item("a", "failed", ["R1"], phase="missing")], "missing", phase_failed="missing")
    s = run_metrics([ok, unbuildable, missing])
    assert s["sr"] == pytest.approx(1 / 3)
    assert s["tasks"] == 3
    assert s["test_acc"] == pytest.approx(1 / 3)
    assert s["viability"] == pytest.approx(1 / 3)
    assert s["failures_by_category"] == {}
    assert s["failures_by_phase"] == {"build": 1, "missing": 1}


def test_an_error_counts_as_not_passed_in_the_headline_and_is_left_out_of_the_determined_figures() -> None:
    result = task(phases() + [item("a", "passed", ["R1"]), item("b", "error", ["R1"]), item("c", "passed", ["R2"])])
    m = task_metrics(result)
    assert (m["test_acc"], m["req_acc"], m["errors"]) == (pytest.approx(2 / 3), 0.5, 1)  # R1 has an errored item: not satisfied
    assert m["requirements"]["R1"]["satisfied"] is False
    assert (m["test_acc_determined"], m["req_acc_determined"]) == (1.0, 1.0)  # R1 is undetermined, R2 satisfied
    assert m["success"] is False and m["success_determined"] is None  # unknown until the error is re-run
    s = run_metrics([result])
    assert (s["sr"], s["sr_determined"], s["tasks_with_errors"]) == (0.0, None, ["t"])


def test_an_all_error_task_keeps_its_place_in_the_denominator() -> None:
    ok = task(phases() + [item("a", "passed", ["R1"])], "ok")
    broken = task(phases() + [item("a", "error", ["R1"]), item("b", "error", ["R2"])], "broken")
    s = run_metrics([ok, broken])
    assert (s["tasks"], s["sr"], s["sr_determined"], s["determined_tasks"]) == (2, 0.5, 1.0, 1)
    assert (s["test_acc"], s["test_acc_determined"]) == (0.5, 1.0)
    assert s["sr_by_tier"] == {"base": 0.5}


def test_a_declared_skip_is_left_out_and_an_empty_oracle_is_no_success() -> None:
    skipped = task(phases() + [item("a", "passed", ["R1"]), item("b", "skipped", ["R1"])])
    assert (task_metrics(skipped)["test_acc"], task_metrics(skipped)["success"]) == (1.0, True)
    nothing_ran = task(phases())
    assert task_metrics(nothing_ran)["success"] is False


def test_alpha_beta_options() -> None:
    result = task(phases() + [item("a", "passed", ["R1"]), item("b", "failed", ["R2"])])
    assert task_metrics(result, MetricOptions(alpha=0.5, beta=0.5))["balanced"] == pytest.approx(0.5 * 0.5 + 0.5 * 0.5)


@pytest.mark.parametrize(("n", "c", "k", "expected"), [(5, 0, 1, 0.0), (5, 5, 3, 1.0), (4, 1, 1, 0.25), (4, 1, 2, 0.5), (10, 3, 5, 1 - 21 / 252)])
def test_pass_at_k_unbiased_estimator(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_samples_are_averaged_per_task_before_the_macro_average() -> None:
    a1 = task(phases() + [item("x", "passed", ["R1"])], "a", "sample-1")
    a2 = task(phases() + [item("x", "failed", ["R1"])], "a", "sample-2")
    b1 = task(phases() + [item("x", "passed", ["R1"])], "b", "sample-1")
    b2 = task(phases() + [item("x", "passed", ["R1"])], "b", "sample-2")
    s = run_metrics([a1, a2, b1, b2])
    assert s["sr"] == pytest.approx((0.5 + 1.0) / 2)
    assert s["pass_at_k"] == {"1": pytest.approx(0.75), "2": 1.0}


def test_generation_cost_per_task() -> None:
    a = task(phases() + [item("x", "passed", ["R1"])], "a")
    a.generation = {"model": "m", "tokens_out": 100, "cost_usd": 0.5}
    b = task(phases() + [item("x", "passed", ["R1"])], "b")
    b.generation = {"model": "m", "tokens_out": 300, "cost_usd": 1.5}
    s = run_metrics([a, b])
    assert s["generation"] == {"tokens_out_per_task": 200, "cost_usd_per_task": 1.0, "cost_usd_total": 2.0, "models": ["m"]}


def test_agent_generation_figures_are_aggregated() -> None:
    a = task(phases() + [item("x", "passed", ["R1"])], "a")
    a.generation = {"model": "agent:m", "steps": 10, "verify_calls": 2, "exit_reason": "submitted", "submitted_with_pass": True}
    b = task(phases() + [item("x", "failed", ["R1"])], "b")
    b.generation = {"model": "agent:m", "steps": 30, "verify_calls": 0, "exit_reason": "steps", "error_kind": "harness"}
    g = run_metrics([a, b])["generation"]
    assert (g["steps_per_task"], g["verify_calls_per_task"]) == (20.0, 1.0)
    # b had no self_verify (no calls, no budget): "submitted with a PASS seen" is over a alone
    assert (g["submitted_rate"], g["submitted_with_pass_rate"], g["exit_reasons"], g["harness_errors"]) == (0.5, 1.0, {"steps": 1, "submitted": 1}, 1)
