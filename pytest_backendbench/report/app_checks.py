"""What report.html shows of app.build's checks: its Table 4 and every finding of the measured checks.

From a report document alone (``summary.papers.app_build`` and the ``app_check`` items), so a
merged or compared report shows the same: per check PASS/WARN/FAIL/NA (and errors) with the pass
rate excluding NA; per app its grades and Q; per finding of the clickable sweep the element's
text, its selector, what went wrong and a link to the screenshot taken after the click; per
Lighthouse run the score, its metrics and a link to the kept JSON; per AB-02 the judge's reason.
"""

from __future__ import annotations

from typing import Any

from .cells import fmt

TABLE_HEADER = ["check", "", "PASS", "WARN", "FAIL", "NA", "error", "pass rate (excl. NA)"]
APPS_HEADER = ["candidate", "viable", "Q", "AB-01", "AB-02", "AB-03", "AB-04", "AB-06", "AB-07"]
MAX_FINDINGS = 200


def app_build_context(document: dict[str, Any]) -> dict[str, Any] | None:
    """The template's view of app.build for one run; None when no app-check item ran and no item was tagged."""
    figures = (document.get("summary", {}).get("papers") or {}).get("app_build") or {}
    measured = [(t["candidate"], i) for t in document.get("tasks", []) for i in t.get("items", []) if i.get("kind") == "app_check"]
    if not measured and not figures.get("checks_mapped"):
        return None
    rows = [
        [check, row.get("name", ""), row.get("pass", 0), row.get("warn", 0), row.get("fail", 0), row.get("na", 0), row.get("error", 0), fmt(row.get("pass_rate"))]
        for check, row in (figures.get("checks") or {}).items()
    ]
    apps = [
        [a["candidate"], "yes" if a["viable"] else "no", fmt(a["q"], percent=False), *[a["checks"].get(c, "NA") for c in APPS_HEADER[3:]]]
        for a in figures.get("per_app") or []
    ]
    findings: list[dict[str, str]] = []
    measurements: list[list[str]] = []
    for candidate, item in measured:
        record = item.get("app_check") or {}
        details = record.get("details") or {}
        check = str(record.get("check", ""))
        grade = str(record.get("grade") or item.get("outcome", ""))
        if check == "AB-06":
            measurements.append([candidate, check, grade, _sweep_summary(details), ""])
            findings += _sweep_findings(candidate, details)
        elif check == "AB-07":
            metrics = ", ".join(f"{k} {v:g}" for k, v in (details.get("metrics") or {}).items() if isinstance(v, (int, float)))
            score = details.get("score")
            text = f"score {score:.2f}; {metrics}" if isinstance(score, (int, float)) else str(details.get("runtime_error") or item.get("message", ""))
            measurements.append([candidate, check, grade, text, str(details.get("report", ""))])
        else:
            measurements.append([candidate, check, grade, str(details.get("reason") or item.get("message", "")), str(details.get("screenshot", ""))])
    return {
        "header": TABLE_HEADER, "rows": rows, "apps_header": APPS_HEADER, "apps": apps, "notes": list(figures.get("notes") or []),
        "measurements": measurements, "findings": findings[:MAX_FINDINGS], "findings_more": max(0, len(findings) - MAX_FINDINGS),
    }


def _sweep_summary(details: dict[str, Any]) -> str:
    outcomes = details.get("outcomes") or []
    clicked = [o for o in outcomes if not o.get("not_clicked")]
    with_findings = sum(1 for o in clicked if o.get("findings"))
    return f"{len(clicked)} controls clicked, {with_findings} with findings ({details.get('seconds', 0):g} s)"


def _sweep_findings(candidate: str, details: dict[str, Any]) -> list[dict[str, str]]:
    found = [
        {"candidate": candidate, "text": "(page load)", "selector": "", "kind": f.get("kind", ""), "detail": f.get("detail", ""), "screenshot": ""}
        for f in details.get("load_findings") or []
    ]
    for outcome in details.get("outcomes") or []:
        for finding in outcome.get("findings") or []:
            found.append({
                "candidate": candidate, "text": outcome.get("text", ""), "selector": outcome.get("selector", ""), "kind": finding.get("kind", ""),
                "detail": str(finding.get("detail", ""))[:300], "screenshot": outcome.get("screenshot") or "",
            })
    return found
