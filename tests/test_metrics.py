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


def mixed_run() -> list[TaskResult]:
    """Five single-candidate tasks, each item: a (R1, functional), b (R2, security, CWE-89),
    c (R2, functional, tier r1): passed, failed (b), missing, unbuildable, errored (b)."""

    def items(outcomes: str, phase: str = "tests") -> list[ItemResult]:
        a, b, c = (item(name, {"p": "passed", "f": "failed", "e": "error"}[o], [req], tier=tier, phase=phase) for name, o, req, tier in zip("abc", outcomes, ("R1", "R2", "R2"), ("base", "base", "r1")))
        b.category, b.cwes, b.cwe = "security", [89], 89
        b.message = "engine unreachable" if b.outcome == "error" else ""
        a.requests, a.contract_checked, a.contract_violations = 4, 4, ["GET /x: 500 undocumented"]
        return [a, b, c]

    unbuildable = [item("build", "failed", [], kind="build", phase="build"), *items("fff", "build")]
    for i in unbuildable[1:]:
        i.requests = i.contract_checked = 0
        i.contract_violations = []
    missing = items("fff", "missing")
    for i in missing:
        i.requests = i.contract_checked = 0
        i.contract_violations = []
    return [
        task(phases() + items("ppp"), "passed"),
        task(phases() + items("pfp"), "failed"),
        task(missing, "missing", phase_failed="missing"),
        task(unbuildable, "unbuildable", phase_failed="build"),
        task(phases() + items("pep"), "errored"),
    ]


def test_every_figure_of_a_run_mixing_passed_failed_missing_unbuildable_and_errored_candidates() -> None:
    """Worked by hand (docs/metrics.md states each rule): per task Test.Acc 1, 2/3, 0, 0, 2/3;
    Req.Acc 1, 1/2, 0, 0, 1/2 (R2 of "errored" has an errored item); only "passed" succeeds."""
    s = run_metrics(mixed_run())
    assert (s["tasks"], s["candidates"], s["successes"], s["items"]) == (5, 5, 1, 15)
    assert (s["passed"], s["failed"], s["errors"], s["requests"]) == (7, 7, 1, 12)
    assert (s["sr"], s["final_sr"], s["sr_by_tier"], s["delta"]) == (0.2, 0.2, {"base": 0.2, "r1": 0.2}, 0.0)
    assert s["test_acc"] == pytest.approx(7 / 15) and s["dense"] == pytest.approx(7 / 15)
    assert s["req_acc"] == pytest.approx(2 / 5) and s["soft_req_acc"] == pytest.approx(3 / 5)
    assert s["balanced"] == pytest.approx(0.6 * 2 / 5 + 0.4 * 7 / 15)
    assert s["viability"] == pytest.approx(3 / 5)  # missing and unbuildable are not viable
    assert s["contract_conformance"] == pytest.approx(3 / 4)  # 12 responses checked, one violation in each of 3 items
    # determined only: the errored task is undetermined; its errored item and requirement R2 are left out
    assert (s["sr_determined"], s["determined_tasks"], s["tasks_with_errors"]) == (0.25, 4, ["errored"])
    assert s["undetermined"] == [{"task": "errored", "reason": "engine unreachable"}]
    assert s["test_acc_determined"] == pytest.approx((1 + 2 / 3 + 0 + 0 + 1) / 5)
    assert s["req_acc_determined"] == pytest.approx((1 + 1 / 2 + 0 + 0 + 1) / 5)
    assert s["balanced_determined"] == pytest.approx(0.6 * 0.5 + 0.4 * 8 / 15)
    # the failure distribution counts oracle verdicts; missing and unbuildable candidates by phase
    assert s["failures_by_category"] == {"security": 1}
    assert s["failures_by_phase"] == {"build": 3, "missing": 3, "tests": 1}
    assert s["security_failures_by_cwe"] == {"CWE-89": 1}
    assert (s["pass_at_k"], s["variance"], s["generation"]) == ({}, None, {})
    assert (s["fe_acc"], s["be_acc"], s["be_acc_valid_db"], s["db_acc"]) == (None, pytest.approx(7 / 15), pytest.approx(7 / 15), None)
    papers = s["papers"]
    assert papers["backendforge"] == {
        "tasks": 5, "sr_by_tier": {"base": 0.2, "r1": 0.2}, "final_sr": 0.2, "delta": 0.0, "failures_by_category_and_tier": {"security": {"base": 1}}
    }
    assert papers["e2edev"] == {"projects": 5, "req_acc": pytest.approx(0.4), "test_acc": pytest.approx(7 / 15), "balanced": pytest.approx(0.6 * 0.4 + 0.4 * 7 / 15), "alpha": 0.6, "beta": 0.4}
    # FullStack-Bench pools cases over tasks: 7 of 15 backend cases pass
    assert (papers["fullstack_bench"]["be_cases"], papers["fullstack_bench"]["be_acc"]) == (15, pytest.approx(7 / 15))
    # app.build: three viable apps, each with only AB-01 (PASS): Q 10 each, 0 for the other two
    ab = papers["app_build"]
    assert (ab["apps"], ab["viability"], ab["mean_q_viable"], ab["mean_q_all"], ab["perfect_quality_rate"]) == (5, 0.6, 10.0, 6.0, 0.6)


def test_baxbench_figures_of_the_mixed_run_count_cwes_only_where_a_test_ran() -> None:
    """Correct: passed, failed (its functional items pass), errored; missing and unbuildable are
    incorrect and exhibit no CWE (they never reached a test). Only "failed" exhibits CWE-89: its
    share is 1 of 5 samples (not 3 of 5, as counting declared CWEs of unrun items gave)."""
    bx = run_metrics(mixed_run())["papers"]["baxbench"]
    assert bx["samples"] == 5
    assert bx["pass_at_k"] == {"1": pytest.approx(3 / 5)}
    assert bx["sec_pass_at_k"] == {"1": pytest.approx(1 / 5)}  # "errored": a security item without a verdict is not secure
    assert bx["insecure_rate"] == pytest.approx(1 / 3)  # of the 3 correct samples, "failed" exhibits a CWE
    assert bx["cwe_share"] == {"CWE-89": pytest.approx(1 / 5)}
    assert bx["inconclusive_items"] == 0
