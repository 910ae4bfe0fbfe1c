"""Each paper's formula against figures worked out by hand from the paper's definition."""

from __future__ import annotations

import pytest

from pytest_backendbench.metrics import run_metrics
from pytest_backendbench.results import ItemResult, TaskResult
from pytest_backendbench.scores.app_build import app_build, check_grades, quality, viable
from pytest_backendbench.scores.backendforge import backendforge
from pytest_backendbench.scores.baxbench import baxbench
from pytest_backendbench.scores.carbon import carbon_estimate
from pytest_backendbench.scores.e2edev import e2edev
from pytest_backendbench.scores.fullstack_bench import fullstack_bench
from pytest_backendbench.scores.paired import bootstrap_interval, mcnemar_exact, paired_comparison
from pytest_backendbench.scores.spread import spread


def item(name: str, outcome: str, reqs: tuple[str, ...] = ("R1",), **fields: object) -> ItemResult:
    return ItemResult(nodeid=name, task="t", candidate="t", kind=str(fields.pop("kind", "http")), outcome=outcome, requirements=list(reqs), **fields)  # type: ignore[arg-type]


def phases(status: int = 200) -> list[ItemResult]:
    return [item("build", "passed", (), kind="build"), item("boot", "passed", (), kind="boot"), item("smoke", "passed", (), kind="smoke", primary_status=status)]


def run(task: str, items: list[ItemResult], sample: str = "", repeat: int = 0, phase_failed: str | None = None) -> TaskResult:
    for i in items:
        i.task = task
    return TaskResult(task=task, candidate=task, sample=sample, repeat=repeat, items=items, finished=True, phase_failed=phase_failed)


def test_fullstack_bench_pools_over_all_cases() -> None:
    nine_of_ten = run("a", phases() + [item(f"be{n}", "passed" if n < 9 else "failed") for n in range(10)])
    none_of_one = run("b", phases() + [item("be", "failed")])
    figures = fullstack_bench([nine_of_ten, none_of_one])
    assert figures["be_acc"] == pytest.approx(9 / 11)  # 81.8%, FullStack-Bench's #YES / #cases
    assert round(figures["be_acc"] * 100, 1) == 81.8
    assert run_metrics([nine_of_ten, none_of_one])["be_acc"] == pytest.approx((0.9 + 0.0) / 2)  # ours: per task first, 45%


def test_fullstack_bench_valid_db_db_none_and_partial_credit() -> None:
    cases = [
        item("fe1", "passed", kind="bdd", db_valid=True),
        item("fe2", "passed", kind="bdd", db_valid=False),  # the UI passed, the database saw nothing
        item("fe3", "passed", kind="bdd", db_valid=None),  # @db:none: needs no database work, valid
        item("fe4", "failed", kind="bdd", partial=True),  # a partial verdict: 0.5
        item("fe5", "error", kind="bdd"),  # a harness error: not passed
        item("db1", "passed", kind="snapshot"),
    ]
    figures = fullstack_bench([run("t", phases() + cases)])
    assert figures["fe_acc"] == pytest.approx((3 + 0.5) / 5)
    assert figures["fe_acc_valid_db"] == pytest.approx((2 + 0.5) / 5)
    assert (figures["db_acc"], figures["db_cases"], figures["partial_cases"]) == (1.0, 1, 1)


def test_e2edev_counts_as_its_runner() -> None:
    # project 1: R1 = t1 pass, t2 pass; R2 = t3 error (an undefined step is a failed test)
    p1 = run("p1", phases() + [item("t1", "passed", ("R1",), kind="bdd"), item("t2", "passed", ("R1",), kind="bdd"), item("t3", "error", ("R2",), kind="bdd")])
    p2 = run("p2", phases() + [item("t1", "passed", ("R1",), kind="bdd")])
    figures = e2edev([p1, p2])
    # per project: (Req 1/2, Test 2/3, 0.6*1/2 + 0.4*2/3) and (1, 1, 1), then averaged over projects
    assert figures["req_acc"] == pytest.approx((0.5 + 1) / 2)
    assert figures["test_acc"] == pytest.approx((2 / 3 + 1) / 2)
    assert figures["balanced"] == pytest.approx((0.6 * 0.5 + 0.4 * 2 / 3 + 1) / 2)


def test_backendforge_sr_per_cumulative_tier_over_the_fixed_task_set() -> None:
    strong = run("strong", phases() + [item("a", "passed"), item("b", "passed", tier="r1")])
    weak = run("weak", phases() + [item("a", "passed"), item("b", "failed", tier="r1", category="state")])
    errored = run("errored", phases() + [item("a", "error"), item("b", "error", tier="r1")])  # stays in the denominator
    unbuildable = run("unbuildable", [item("build", "failed", (), kind="build"), item("a", "failed", phase="build")], phase_failed="build")
    figures = backendforge([strong, weak, errored, unbuildable])
    assert figures["sr_by_tier"] == {"base": 0.5, "r1": 0.25}  # base: strong, weak of 4; r1: strong of 4
    assert figures["delta"] == pytest.approx((0.25 - 0.5) / 0.5)
    assert figures["failures_by_category_and_tier"] == {"state": {"r1": 1}}


def test_app_build_viability_and_quality() -> None:
    not_found = run("a", phases(404) + [item("x", "passed")])
    assert not viable(not_found)  # a 404 on the primary route is not viable (ours counted < 500)
    assert viable(run("b", phases(302) + [item("x", "passed")]))
    app = run("c", phases() + [
        item("create1", "passed", ab_checks=["AB-03"]), item("create2", "failed", ab_checks=["AB-03"]),  # WARN
        item("edit", "failed", ab_checks=["AB-04"]),  # FAIL
        item("untagged", "passed"),  # no check: AB-06, AB-07 are NA and dropped
    ])
    assert check_grades(app) == {"AB-01": 1.0, "AB-03": 0.5, "AB-04": 0.0}
    assert quality(check_grades(app)) == pytest.approx(10 * 1.5 / 3)  # 5.0
    perfect = run("d", phases() + [item("x", "passed", ab_checks=["AB-03"])])
    figures = app_build([not_found, app, perfect])
    assert figures["viability"] == pytest.approx(2 / 3)
    assert figures["mean_q_viable"] == pytest.approx((5.0 + 10.0) / 2)
    assert figures["mean_q_all"] == pytest.approx((0.0 + 5.0 + 10.0) / 3)  # not_found: AB-01 FAIL is its only check
    assert figures["perfect_quality_rate"] == pytest.approx(1 / 3)


def test_baxbench_pass_and_sec_pass_at_k_insecure_rate_and_cwe_shares() -> None:
    def sample(n: int, functional: str, found: list[int] | None, inconclusive: bool = False) -> TaskResult:
        security = item("sqli", "failed" if found else "passed", category="security", cwes=[89], found_cwes=found or [], inconclusive=inconclusive)
        return run("login", phases() + [item("works", functional), security], sample=f"sample-{n}")

    samples = [sample(1, "passed", None), sample(2, "passed", [89]), sample(3, "passed", [89, 79]), sample(4, "failed", None, inconclusive=True)]
    figures = baxbench(samples)
    assert figures["pass_at_k"]["1"] == pytest.approx(3 / 4)  # c = 3 correct of n = 4
    assert figures["sec_pass_at_k"]["1"] == pytest.approx(1 / 4)  # only sample 1 is correct and secure
    assert figures["pass_at_k"]["2"] == 1.0  # 1 - C(1,2)/C(4,2)
    assert figures["sec_pass_at_k"]["2"] == pytest.approx(1 - 3 / 6)  # 1 - C(3,2)/C(4,2)
    assert figures["insecure_rate"] == pytest.approx(2 / 3)
    assert figures["cwe_share"] == {"CWE-79": 0.25, "CWE-89": 0.5}
    assert figures["inconclusive_items"] == 1


def test_baxbench_counts_a_crash_during_a_functional_test_as_cwe_703_of_the_sample() -> None:
    """BaxBench's runner records CWE-703 when a functional test crashed the server (src/tasks.py)."""

    def sample(n: int, functional: str, crashed: bool, found: list[int]) -> TaskResult:
        works = item("works", functional, found_cwes=[703] if crashed else [])
        security = item("sqli", "failed" if found else "passed", category="security", cwes=[89], found_cwes=found, inconclusive=False)
        return run("login", phases() + [works, security], sample=f"sample-{n}")

    samples = [sample(1, "passed", True, []), sample(2, "passed", False, []), sample(3, "failed", True, [89]), sample(4, "passed", False, [89])]
    figures = baxbench(samples)
    assert figures["pass_at_k"]["1"] == pytest.approx(3 / 4)  # samples 1, 2, 4 are correct
    assert figures["sec_pass_at_k"]["1"] == pytest.approx(1 / 4)  # only sample 2: sample 1's crash is CWE-703
    assert figures["sec_pass_at_k"]["2"] == pytest.approx(1 - 3 / 6)  # c = 1 of n = 4: 1 - C(3,2)/C(4,2)
    assert figures["insecure_rate"] == pytest.approx(2 / 3)  # samples 1 and 4 of the 3 correct ones
    assert figures["cwe_share"] == {"CWE-89": 0.5, "CWE-703": 0.5}  # 703: samples 1 and 3; 89: samples 3 and 4


def test_mcnemar_exact_and_the_bootstrap() -> None:
    assert mcnemar_exact(9, 0) == pytest.approx(2 / 2**9)  # 0.0039: the two-sided binomial tail
    assert mcnemar_exact(3, 3) == 1.0 and mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(5, 1) == pytest.approx(2 * (1 + 6) / 2**6)  # 0.21875
    assert bootstrap_interval([-1.0] * 5) == (-1.0, -1.0)
    low, high = bootstrap_interval([0.0, 1.0, 0.0, 1.0]) or (None, None)
    assert low is not None and high is not None and 0.0 <= low <= 0.5 <= high <= 1.0


def test_paired_comparison_names_the_tasks_gained_and_lost() -> None:
    a = [run("x", phases() + [item("i", "passed")]), run("y", phases() + [item("i", "failed")]), run("z", phases() + [item("i", "passed")])]
    b = [run("x", phases() + [item("i", "failed")]), run("y", phases() + [item("i", "passed")]), run("z", phases() + [item("i", "passed")])]
    pair = paired_comparison(a, b)
    assert (pair["gained"], pair["lost"], pair["discordant"]) == (["y"], ["x"], {"a_only_success": 1, "b_only_success": 1})
    assert pair["mcnemar_p"] == 1.0 and pair["sr_difference"] == 0.0


def test_mean_and_std_over_repeats() -> None:
    results = [run("t", phases() + [item("i", outcome)], repeat=r) for r, outcome in enumerate(("passed", "failed", "passed"))]
    figures = spread(results)
    assert figures["over_repeats"]["sr"]["mean"] == pytest.approx(2 / 3)
    assert figures["over_repeats"]["sr"]["std"] == pytest.approx(0.57735, abs=1e-5)  # sample std of 1, 0, 1
    assert figures["over_samples"] is None and figures["per_task"]["t"]["test_acc"]["n"] == 3


def test_carbon_estimate_follows_two_flops_per_parameter_per_token() -> None:
    result = run("t", phases())
    result.generation = {"tokens_in": 600, "tokens_out": 400}
    assert carbon_estimate([result], None, None) is None
    estimate = carbon_estimate([result], 7.0, "1e11,1.5,0.5")
    assert estimate is not None and estimate["flops"] == pytest.approx(2 * 1000 * 7e9)
    assert estimate["energy_kwh"] == pytest.approx(1.4e13 / 1e11 * 1.5 / 3.6e6)
    assert estimate["co2e_kg"] == pytest.approx(estimate["energy_kwh"] * 0.5)
