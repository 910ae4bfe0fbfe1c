"""The SVG charts of the HTML report, drawn here so the page fetches nothing.

Failures by category per run (grouped bars), success-rate attrition from the base tier to the
final one (lines), and a task x run heat map of Test.Acc with success marks. Every text that
comes from a report goes through markupsafe's ``escape`` (the escaping Jinja2's autoescape
uses); each chart is returned as ``Markup`` for the page template.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from markupsafe import Markup, escape

from ..markers import ordered_tiers
from ..tasks import CATEGORIES
from .cells import fmt

# Okabe-Ito: distinguishable with the common colour-vision deficiencies
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
# RdYlGn stops for Test.Acc 0 -> 0.5 -> 1
HEAT_STOPS = ((0.0, (215, 48, 39)), (0.5, (254, 224, 139)), (1.0, (26, 152, 80)))
CHAR_W = 7.0  # average glyph width of the 12px sans-serif labels, for layout only
PHASE_WORDS = {"missing": "missing", "build": "failed to build", "startup": "failed to start"}


def _e(value: object) -> str:
    return str(escape(str(value)))


def colour(index: int) -> str:
    """The run's colour in every chart and heading."""
    return PALETTE[index % len(PALETTE)]


def _svg(kind: str, width: float, height: float, title: str, parts: list[str]) -> Markup:
    return Markup(
        f'<svg class="chart chart-{kind}" xmlns="http://www.w3.org/2000/svg" role="img" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" aria-label="{_e(title)}"><title>{_e(title)}</title>' + "".join(parts) + "</svg>"
    )


def _text(x: float, y: float, text: str, anchor: str = "start", cls: str = "", extra: str = "") -> str:
    class_attr = f' class="{cls}"' if cls else ""
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{class_attr}{extra}>{_e(text)}</text>'


def nice_ticks(maximum: float, count: int = 5) -> list[float]:
    """0..top in round steps (1, 2, 5 x 10^k), top >= maximum; at least [0, 1]."""
    if maximum <= 0:
        return [0.0, 1.0]
    raw = maximum / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    step = max(step, 1.0)  # counts of items: whole numbers
    top = math.ceil(maximum / step) * step
    return [i * step for i in range(round(top / step) + 1)]


def _legend(runs: list[tuple[str, dict[str, Any]]], x: float, y: float, width: float) -> tuple[list[str], float]:
    """Swatches with run labels, wrapped to ``width``; returns the parts and the height used."""
    parts: list[str] = []
    cx, cy = x, y
    for index, (label, _) in enumerate(runs):
        w = 18 + len(label) * CHAR_W + 16
        if cx > x and cx + w > x + width:
            cx, cy = x, cy + 18
        parts.append(f'<rect class="swatch" x="{cx:.1f}" y="{cy - 10:.1f}" width="12" height="12" rx="2" fill="{colour(index)}"/>')
        parts.append(_text(cx + 17, cy, label))
        cx += w
    return parts, cy - y + 18


def _categories(runs: list[tuple[str, dict[str, Any]]]) -> list[str]:
    seen = {c for _, d in runs for c in d["summary"]["failures_by_category"]}
    known = [c for c in CATEGORIES if c in seen]
    return known + sorted(seen - set(known))


def failures_chart(runs: list[tuple[str, dict[str, Any]]]) -> Markup:
    """Grouped bars: one group per failure category, one bar per run (failed oracle items)."""
    categories = _categories(runs)
    width = max(560.0, 90.0 + len(categories) * max(110.0, 26.0 * len(runs) + 30.0))
    left, right, top = 48.0, 16.0, 16.0
    legend, legend_h = _legend(runs, left, top + 10, width - left - right)
    plot_top = top + legend_h + 12
    plot_h = 220.0
    label_h = 40.0
    height = plot_top + plot_h + label_h
    base_y = plot_top + plot_h
    parts = list(legend)
    maximum = max([d["summary"]["failures_by_category"].get(c, 0) for _, d in runs for c in categories] or [0])
    ticks = nice_ticks(float(maximum))
    scale = plot_h / ticks[-1]
    for tick in ticks:
        y = base_y - tick * scale
        parts.append(f'<line class="grid" x1="{left:.1f}" y1="{y:.1f}" x2="{width - right:.1f}" y2="{y:.1f}"/>')
        parts.append(_text(left - 6, y + 4, f"{tick:g}", "end", "muted"))
    parts.append(f'<line class="axis" x1="{left:.1f}" y1="{base_y:.1f}" x2="{width - right:.1f}" y2="{base_y:.1f}"/>')
    parts.append(
        _text(12, plot_top + plot_h / 2, "failed items", "middle", "muted", f' transform="rotate(-90 12 {plot_top + plot_h / 2:.1f})"')
    )
    if not categories:
        parts.append(_text((left + width - right) / 2, plot_top + plot_h / 2, "no oracle item failed in any run", "middle", "muted"))
        return _svg("failures", width, height, "Failed oracle items by category: none", parts)
    group_w = (width - left - right) / len(categories)
    bar_w = min(28.0, (group_w - 24.0) / len(runs))
    for g, category in enumerate(categories):
        gx = left + g * group_w
        start = gx + (group_w - bar_w * len(runs)) / 2
        for r, (label, document) in enumerate(runs):
            count = document["summary"]["failures_by_category"].get(category, 0)
            h = count * scale
            x = start + r * bar_w
            parts.append(
                f'<rect class="bar" data-run="{_e(label)}" data-category="{_e(category)}" x="{x + 1:.1f}" y="{base_y - h:.1f}" '
                f'width="{bar_w - 2:.1f}" height="{h:.1f}" fill="{colour(r)}"><title>{_e(label)} · {_e(category)}: {count}</title></rect>'
            )
            if count:
                parts.append(_text(x + bar_w / 2, base_y - h - 4, str(count), "middle", "muted"))
        parts.append(_text(gx + group_w / 2, base_y + 18, category.replace("_", " "), "middle"))
    return _svg("failures", width, height, "Failed oracle items by category, per run", parts)


def failure_note(runs: list[tuple[str, dict[str, Any]]]) -> Markup:
    """Candidates that never reached the oracle (their items count by phase, not category)."""
    notes = []
    for label, document in runs:
        phases: dict[str, int] = {}
        for task in document["tasks"]:
            if task["phase_failed"] in ("missing", "build", "startup"):
                phases[task["phase_failed"]] = phases.get(task["phase_failed"], 0) + 1
        if phases:
            notes.append(f"{_e(label)}: " + ", ".join(f"{n} {PHASE_WORDS[p]}" for p, n in sorted(phases.items())))
    if not notes:
        return Markup("")
    return Markup("Not in the bars — candidates that never reached the oracle: " + "; ".join(notes) + ".")


def _tier_label(tier: str, index: int) -> str:
    return "Base" if index == 0 and tier == "base" else f"+{tier.upper()}" if tier.startswith("r") else tier


def attrition_chart(runs: list[tuple[str, dict[str, Any]]]) -> Markup:
    """Lines: SR at each cumulative tier (base, +R1, ..., final) for every run."""
    tiers = ordered_tiers(t for _, d in runs for t in d["summary"]["sr_by_tier"])
    width = max(560.0, 120.0 + 120.0 * max(1, len(tiers) - 1))
    left, right, top = 52.0, 40.0, 16.0
    legend, legend_h = _legend(runs, left, top + 10, width - left - right)
    plot_top = top + legend_h + 26  # room for the value labels of points at 100%
    plot_h = 220.0
    base_y = plot_top + plot_h
    height = base_y + 40.0
    parts = list(legend)
    for pct in (0, 25, 50, 75, 100):
        y = base_y - pct / 100 * plot_h
        parts.append(f'<line class="grid" x1="{left:.1f}" y1="{y:.1f}" x2="{width - right:.1f}" y2="{y:.1f}"/>')
        parts.append(_text(left - 6, y + 4, f"{pct}%", "end", "muted"))
    parts.append(f'<line class="axis" x1="{left:.1f}" y1="{base_y:.1f}" x2="{width - right:.1f}" y2="{base_y:.1f}"/>')
    parts.append(
        _text(12, plot_top + plot_h / 2, "success rate", "middle", "muted", f' transform="rotate(-90 12 {plot_top + plot_h / 2:.1f})"')
    )
    if not tiers:
        parts.append(_text((left + width - right) / 2, plot_top + plot_h / 2, "no oracle tiers were run", "middle", "muted"))
        return _svg("attrition", width, height, "Success rate by tier: nothing ran", parts)
    span = width - left - right - 40.0
    xs = {t: left + 20.0 + (span * i / (len(tiers) - 1) if len(tiers) > 1 else span / 2) for i, t in enumerate(tiers)}
    for i, tier in enumerate(tiers):
        label = _tier_label(tier, i) + (" (final)" if i == len(tiers) - 1 and len(tiers) > 1 else "")
        parts.append(f'<line class="grid" x1="{xs[tier]:.1f}" y1="{plot_top:.1f}" x2="{xs[tier]:.1f}" y2="{base_y:.1f}"/>')
        parts.append(_text(xs[tier], base_y + 18, label, "middle"))
    for r, (label, document) in enumerate(runs):
        by_tier = document["summary"]["sr_by_tier"]
        points = [(xs[t], base_y - by_tier[t] * plot_h, t, by_tier[t]) for t in tiers if by_tier.get(t) is not None]
        ink = colour(r)
        # a run that a later one would hide (same SR at every tier) is drawn wider, leaving a visible rim
        under = min(3, sum(1 for _, later in runs[r + 1 :] if later["summary"]["sr_by_tier"] == by_tier))
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _ in points)
            parts.append(
                f'<polyline class="series" data-run="{_e(label)}" fill="none" stroke="{ink}" '
                f'stroke-width="{2.5 + 2.5 * under:g}" stroke-linejoin="round" points="{path}"/>'
            )
        for x, y, tier, value in points:
            parts.append(
                f'<circle class="point" data-run="{_e(label)}" cx="{x:.1f}" cy="{y:.1f}" r="{4.5 + 1.5 * under:g}" fill="{ink}" '
                f'stroke="#fff" stroke-width="1.5"><title>{_e(label)} · {_e(tier)}: {_e(fmt(value))}</title></circle>'
            )
            if not _same_before(runs, r, tier):  # runs sharing a value share its label
                shared = _same_after(runs, r, tier)
                parts.append(_text(x + 10, y - 8, fmt(value), "start", "", f' fill="{"#1d232b" if shared else ink}"'))
    return _svg("attrition", width, height, "Success rate by cumulative oracle tier, per run", parts)


def _same_before(runs: list[tuple[str, dict[str, Any]]], index: int, tier: str) -> int:
    value = runs[index][1]["summary"]["sr_by_tier"].get(tier)
    return sum(1 for _, d in runs[:index] if d["summary"]["sr_by_tier"].get(tier) == value)


def _same_after(runs: list[tuple[str, dict[str, Any]]], index: int, tier: str) -> int:
    value = runs[index][1]["summary"]["sr_by_tier"].get(tier)
    return sum(1 for _, d in runs[index + 1 :] if d["summary"]["sr_by_tier"].get(tier) == value)


def attrition_note(runs: list[tuple[str, dict[str, Any]]]) -> Markup:
    deltas = [f"{_e(label)}: {_e(fmt(d['summary']['delta'], percent=False))}" for label, d in runs]
    return Markup("Delta = (Final SR − Base SR) / Base SR — " + "; ".join(deltas) + ".")


def heat_colour(value: float) -> str:
    """Test.Acc in [0, 1] as an RdYlGn colour."""
    value = min(1.0, max(0.0, value))
    for (x0, c0), (x1, c1) in itertools.pairwise(HEAT_STOPS):
        if value <= x1:
            t = (value - x0) / (x1 - x0)
            r, g, b = (round(a + (b_ - a) * t) for a, b_ in zip(c0, c1))
            return f"#{r:02x}{g:02x}{b:02x}"
    r, g, b = HEAT_STOPS[-1][1]
    return f"#{r:02x}{g:02x}{b:02x}"


def _ink_for(background: str) -> str:
    r, g, b = (int(background[i : i + 2], 16) / 255 for i in (1, 3, 5))
    return "#111" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "#fff"


def _cell(entries: list[dict[str, Any]]) -> tuple[float | None, str, str]:
    """(mean Test.Acc, mark text, tooltip detail) for one task's candidates in one run."""
    accs = [e["metrics"]["test_acc"] for e in entries if e["metrics"]["test_acc"] is not None]
    acc = sum(accs) / len(accs) if accs else None
    # None: undetermined (harness errors); reports before fixed denominators had it in "success"
    verdicts = [e["metrics"].get("success_determined", e["metrics"]["success"]) for e in entries]
    successes = sum(1 for v in verdicts if v)
    phases = sorted({e["phase_failed"] for e in entries if e["phase_failed"] in ("missing", "build", "startup")})
    if len(entries) > 1:
        mark = f"{successes}/{len(entries)} ✓" + ("?" if None in verdicts else "")
    elif verdicts[0] is None:
        mark = "?"
    elif verdicts[0]:
        mark = "✓"
    else:
        mark = "✗ " + phases[0] if phases else "✗"
    details = [
        f"Test.Acc {fmt(acc)}",
        f"Req.Acc {fmt(_mean([e['metrics']['req_acc'] for e in entries]))}",
        f"success {successes}/{len(entries)}",
    ]
    undetermined = sum(1 for v in verdicts if v is None)
    if undetermined:
        details.append(f"{undetermined} undetermined (harness errors: not passed in SR)")
    if phases:
        details.append("failed at " + ", ".join(phases))
    return acc, mark, " · ".join(details)


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def heatmap_chart(runs: list[tuple[str, dict[str, Any]]], task_ids: list[str]) -> Markup:
    """Task x run grid: cell colour = Test.Acc (samples averaged), mark = success."""
    label_w = max(80.0, max((len(t) for t in task_ids), default=4) * CHAR_W + 16)
    col_w = max(110.0, max((len(label) for label, _ in runs), default=4) * CHAR_W + 16)
    row_h = 26.0
    head_h = 30.0
    legend_h = 46.0
    width = label_w + col_w * len(runs) + 16
    width = max(width, label_w + 620.0)
    height = head_h + row_h * max(1, len(task_ids)) + legend_h
    parts: list[str] = []
    for r, (label, _) in enumerate(runs):
        x = label_w + r * col_w + col_w / 2
        parts.append(_text(x, head_h - 10, label, "middle", "", ' font-weight="600"'))
    for row, task_id in enumerate(task_ids):
        y = head_h + row * row_h
        parts.append(_text(label_w - 10, y + row_h / 2 + 4, task_id, "end"))
        for col, (label, document) in enumerate(runs):
            x = label_w + col * col_w
            entries = [t for t in document["tasks"] if t["task"] == task_id]
            if not entries:
                parts.append(
                    f'<rect class="cell empty" x="{x + 1:.1f}" y="{y + 1:.1f}" width="{col_w - 2:.1f}" height="{row_h - 2:.1f}" '
                    f'fill="#eef0f3"><title>{_e(task_id)} · {_e(label)}: not in this run</title></rect>'
                )
                parts.append(_text(x + col_w / 2, y + row_h / 2 + 4, "–", "middle", "muted"))
                continue
            acc, mark, detail = _cell(entries)
            fill = heat_colour(acc) if acc is not None else "#c9ced6"
            ink = _ink_for(fill)
            parts.append(
                f'<rect class="cell" data-task="{_e(task_id)}" data-run="{_e(label)}" x="{x + 1:.1f}" y="{y + 1:.1f}" '
                f'width="{col_w - 2:.1f}" height="{row_h - 2:.1f}" rx="3" fill="{fill}"><title>{_e(task_id)} · {_e(label)}: {_e(detail)}</title></rect>'
            )
            parts.append(_text(x + col_w / 2, y + row_h / 2 + 4, f"{mark}  {fmt(acc)}", "middle", "", f' fill="{ink}"'))
    # the colour scale
    ly = head_h + row_h * max(1, len(task_ids)) + 18
    gradient = (
        '<defs><linearGradient id="heat-scale" x1="0" x2="1" y1="0" y2="0">'
        + "".join(f'<stop offset="{x:g}" stop-color="{heat_colour(x)}"/>' for x, _ in HEAT_STOPS)
        + "</linearGradient></defs>"
    )
    parts.insert(0, gradient)
    parts.append(f'<rect class="scale" x="{label_w:.1f}" y="{ly:.1f}" width="160" height="10" rx="2" fill="url(#heat-scale)"/>')
    parts.append(_text(label_w, ly + 24, "0%", "start", "muted"))
    parts.append(_text(label_w + 160, ly + 24, "100% Test.Acc", "end", "muted"))
    parts.append(_text(label_w + 176, ly + 9, "✓ every item of the final tier passed · ? undetermined (harness errors)", "start", "muted"))
    return _svg("heatmap", width, height, "Test.Acc per task and run", parts)
