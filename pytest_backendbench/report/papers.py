"""Each paper's figures and the spread over runs as (name, value) rows, named as the papers name
them (docs/metrics.md quotes the definitions)."""

from __future__ import annotations

from typing import Any

from .cells import fmt as _fmt


def _ks(figures: dict[str, float], prefix: str) -> str:
    return ", ".join(f"{prefix}@{k} {_fmt(v)}" for k, v in figures.items()) or "-"


def paper_rows(papers: dict[str, Any]) -> list[tuple[str, str]]:
    """One row per paper: its own figures, computed from the same items."""
    rows: list[tuple[str, str]] = []
    bf = papers.get("backendforge")
    if bf:
        tiers = ", ".join(f"{t} {_fmt(v)}" for t, v in bf["sr_by_tier"].items())
        rows.append(("BackendForge SR by tier (Delta)", f"{tiers or '-'} ({_fmt(bf['delta'], percent=False)})"))
    e2 = papers.get("e2edev")
    if e2:
        rows.append(("E2EDev Req.Acc / Test.Acc / Balanced", f"{_fmt(e2['req_acc'])} / {_fmt(e2['test_acc'])} / {_fmt(e2['balanced'])}"))
    fs = papers.get("fullstack_bench")
    if fs and any(fs.get(f"{k}_cases") for k in ("fe", "be", "db")):
        rows.append((
            "FullStack-Bench FE / BE / DB (pooled)",
            f"{_fmt(fs['fe_acc'])} / {_fmt(fs['be_acc'])} / {_fmt(fs['db_acc'])} of {fs['fe_cases']} / {fs['be_cases']} / {fs['db_cases']} cases",
        ))
        rows.append(("FullStack-Bench FE / BE w/ valid DB", f"{_fmt(fs['fe_acc_valid_db'])} / {_fmt(fs['be_acc_valid_db'])}"))
    ab = papers.get("app_build")
    if ab:
        rows.append((
            "app.build viability / mean Q viable / all / perfect",
            f"{_fmt(ab['viability'])} / {_fmt(ab['mean_q_viable'], percent=False)} / {_fmt(ab['mean_q_all'], percent=False)} / {_fmt(ab['perfect_quality_rate'])}",
        ))
        rows += app_build_rows(ab)
    iw = papers.get("infiniteweb")
    if iw and iw.get("goal_runs"):
        rows.append(("InfiniteWeb goals: dense reward / success", f"{_fmt(iw['mean_reward'], percent=False)} / {_fmt(iw['success_rate'])} of {iw['goal_runs']} goal runs"))
    bx = papers.get("baxbench")
    if bx:
        rows.append(("BaxBench pass@k / sec_pass@k", f"{_ks(bx['pass_at_k'], 'pass')} / {_ks(bx['sec_pass_at_k'], 'sec_pass')}"))
        if bx.get("cwe_share") or bx.get("insecure_rate") is not None:
            # the share of samples per CWE is a table of its own (tables.cwe_table)
            rows.append(("BaxBench insecure rate (of correct samples)", f"{_fmt(bx['insecure_rate'])}, {len(bx['cwe_share'])} CWEs exhibited"))
    return rows


def webgen_bench_rows(table: dict[str, Any] | None) -> list[tuple[str, str]]:
    """WebGen-Bench's compute_acc.py figures over the frontend judge cases (scores/webgen_bench.py), when a judge ran."""
    if not table:
        return []
    rows = [(
        "WebGen-Bench accuracy (YES / PARTIAL / NO / start failed)",
        f"{_fmt(table['accuracy'])} ({_fmt(table['yes_rate'])} / {_fmt(table['partial_rate'])} / {_fmt(table['no_rate'])} / {_fmt(table['start_failed_rate'])} of {table['cases']} cases)",
    )]
    if table.get("appearance_graded"):
        rows.append(("WebGen-Bench appearance grade (1-5)", _fmt(table["appearance_grade"], percent=False)))
    return rows


def _mean_std(figure: dict[str, Any] | None) -> str:
    if not figure:
        return "-"
    return f"{_fmt(figure['mean'])} ± {_fmt(figure['std'])} (n={figure['n']})"


def spread_rows(spread: dict[str, Any]) -> list[tuple[str, str]]:
    """Mean ± std of SR, Test.Acc and Req.Acc over repeats and over samples, when there are several."""
    rows = []
    for key, over in (("over_repeats", "repeats"), ("over_samples", "samples")):
        figures = spread.get(key)
        if figures:
            rows.append((f"mean ± std over {over}", "; ".join(f"{name} {_mean_std(figures.get(k))}" for name, k in (("SR", "sr"), ("Test.Acc", "test_acc"), ("Req.Acc", "req_acc")))))
    return rows


def carbon_rows(carbon: dict[str, Any] | None) -> list[tuple[str, str]]:
    """The generation compute estimate (E2EDev's FLOPs = 2 x tokens x active parameters)."""
    if not carbon:
        return []
    rows = [("generation FLOPs (2 x tokens x active params)", f"{carbon['flops']:.3g} ({carbon['tokens']} tokens, {carbon['active_params_billion']:g}B active)")]
    if "co2e_kg" in carbon:
        rows.append(("generation energy / CO2e", f"{carbon['energy_kwh']:.3g} kWh / {carbon['co2e_kg']:.3g} kg"))
    return rows


def app_build_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    """app.build's Table 4 in one row (PASS/WARN/FAIL/NA per check, pass rate excluding NA) and why checks are NA."""
    checks = figures.get("checks") or {}
    measured = {c: row for c, row in checks.items() if row.get("na", 0) < figures.get("apps", 0)}
    rows = []
    if measured:
        cells = [
            f"{c} {row['pass']}/{row['warn']}/{row['fail']}/{row['na']}" + (f"+{row['error']} err" if row.get("error") else "") + f" ({_fmt(row['pass_rate'])})"
            for c, row in measured.items()
        ]
        rows.append(("app.build checks P/W/F/NA (pass rate)", "; ".join(cells)))
    if figures.get("notes"):
        rows.append(("app.build NA", "; ".join(figures["notes"])))
    return rows
