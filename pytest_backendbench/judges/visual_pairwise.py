"""InfiniteWeb's pairwise visual judge: two runs' pages side by side, on five dimensions.

``backendbench report compare A B --visual --judge openai:<model>`` shows the judge model, for
every candidate both runs have a page screenshot of (``--bench-page-screenshot``: the smoke
item's ``artifacts.screenshot``), the two full-page screenshots, preceded by the task's design
image when it has one (``benchmarks/<task>/design.png`` or ``.jpg`` under ``--bench-root``).
As in InfiniteWeb (section 4.1, "LLM-as-Judge Visual Quality"), the model judges which one better
matches the design (without a design image: which one is visually better made) on (1) visual
layout, (2) colour scheme, (3) typography and spacing, (4) component arrangement and structure
and (5) overall aesthetic consistency, and names a winner or a tie.

A pairwise judge favours a position; InfiniteWeb does not say how it handled that, so this
judge does what MT-Bench's pairwise judge (Zheng et al., 2023, which InfiniteWeb cites) did
about it: the order is swapped for half of the pairs — deterministically: the pairs sorted by
the sha256 of the candidate's key (its task id, with the sample or repeat), every second one
swapped, so a re-run asks the same questions (and replays them from the judge cache). Reported from B's side against A:
win / tie / lose rates over the judged pairs, overall and per dimension; a pair whose answer
names no verdict is ``unjudged`` (a harness fault, shown with the answer), never a tie.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .model import JudgeModel, image_part

PURPOSE = "visual-pairwise"
DIMENSIONS = {
    "layout": "visual layout similarity",
    "colour": "colour scheme matching",
    "typography": "typography and spacing",
    "arrangement": "component arrangement and structure",
    "consistency": "overall aesthetic consistency",
}
OUTCOMES = ("win", "tie", "lose")
DESIGN_NAMES = ("design.png", "design.jpg", "design.jpeg")
MAX_REASON_CHARS = 400

_ANSWER_LINE = re.compile(r"^\s*[*#\-\s]*(?:component\s+|visual\s+|overall\s+)?(?P<name>layout|colou?r|typography|arrangement|consistency|verdict)\b[^:\n]*:\s*\**\s*(?P<value>1|2|tie)\b", re.IGNORECASE | re.MULTILINE)


def instructions(with_design: bool) -> str:
    """The judge's task: five dimensions, one line each, then the verdict."""
    target = (
        "The first image is the reference design. Judge which screenshot better matches the target design"
        if with_design
        else "There is no reference design. Judge which screenshot shows the better made page (a coherent, polished, usable design)"
    )
    dimensions = "\n".join(f"{name}: 1, 2 or tie   ({text})" for name, text in DIMENSIONS.items())
    return (
        "You compare two implementations of the same web page from full-page screenshots, labelled Screenshot 1 and Screenshot 2.\n"
        f"{target} across five dimensions: (1) visual layout similarity, (2) colour scheme matching, (3) typography and spacing, "
        "(4) component arrangement and structure, (5) overall aesthetic consistency.\n"
        "Answer with exactly these lines, each naming the better screenshot or tie, then the overall verdict and one sentence why:\n"
        f"{dimensions}\nverdict: 1, 2 or tie\nreason: ..."
    )


def swapped_keys(keys: list[str]) -> set[str]:
    """The candidates whose pair is shown B first: every second one in the order of their keys' sha256.

    Exactly half of the pairs (one fewer of an odd number) are swapped, so a judge that always
    prefers one position gives each run the same number of wins; which ones does not depend on
    the order the reports list them in.
    """
    ordered = sorted(keys, key=lambda key: hashlib.sha256(key.encode("utf-8")).hexdigest())
    return set(ordered[1::2])


@dataclass(frozen=True)
class PagePair:
    """One candidate's page in both runs, and its task's design image if any."""

    key: str
    task: str
    a: Path
    b: Path
    design: Path | None = None


@dataclass
class PairVerdict:
    """The judge's answer for one pair, from run B's side (win: B's page is better)."""

    key: str
    task: str
    swapped: bool
    overall: str | None  # win | tie | lose; None: unjudged
    dimensions: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    replayed: bool = False


def parse_answer(text: str) -> tuple[str | None, dict[str, str]]:
    """(verdict, {dimension: answer}) with answers '1', '2' or 'tie', as the model wrote them."""
    found: dict[str, str] = {}
    for match in _ANSWER_LINE.finditer(text):
        name = match.group("name").lower().replace("color", "colour")
        found.setdefault(name, match.group("value").lower())
    verdict = found.pop("verdict", None)
    return verdict, found


def _side(answer: str, swapped: bool) -> str:
    """'1' / '2' / 'tie' as shown -> win / lose / tie for run B."""
    if answer == "tie":
        return "tie"
    b_shown = "1" if swapped else "2"
    return "win" if answer == b_shown else "lose"


def _image(path: Path) -> dict[str, Any]:
    kind = "jpeg" if path.suffix.lower() in (".jpg", ".jpeg") else "png"
    return image_part(path.read_bytes(), kind)


def judge_pair(model: JudgeModel, pair: PagePair, swapped: bool) -> PairVerdict:
    """Ask the model about one pair, run B's page first when ``swapped``."""
    first, second = (pair.b, pair.a) if swapped else (pair.a, pair.b)
    content: list[dict[str, Any]] = [{"type": "text", "text": f"Task {pair.task}."}]
    if pair.design is not None:
        content += [{"type": "text", "text": "Reference design:"}, _image(pair.design)]
    content += [{"type": "text", "text": "Screenshot 1:"}, _image(first), {"type": "text", "text": "Screenshot 2:"}, _image(second)]
    messages: list[dict[str, Any]] = [{"role": "system", "content": instructions(pair.design is not None)}, {"role": "user", "content": content}]
    answer = model.ask(messages, purpose=PURPOSE)
    verdict, dimensions = parse_answer(answer.text)
    text = answer.text.strip()
    return PairVerdict(
        key=pair.key, task=pair.task, swapped=swapped,
        overall=_side(verdict, swapped) if verdict is not None else None,
        dimensions={name: _side(value, swapped) for name, value in dimensions.items() if name in DIMENSIONS},
        reason=text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…",
        tokens_in=answer.tokens_in, tokens_out=answer.tokens_out, replayed=answer.replayed,
    )


def page_screenshots(document: dict[str, Any], report_dir: Path) -> dict[str, Path]:
    """Candidate key -> its kept page screenshot (the smoke item's ``artifacts.screenshot``)."""
    found: dict[str, Path] = {}
    for task in document["tasks"]:
        for item in task["items"]:
            shot = (item.get("artifacts") or {}).get("screenshot") if item.get("kind") == "smoke" else None
            if shot:
                path = Path(shot) if Path(shot).is_absolute() else report_dir / shot
                if path.is_file():
                    found[task["candidate"]] = path
    return found


def design_image(bench_root: Path | None, task: str) -> Path | None:
    """The task's design image (``benchmarks/<task>/design.png`` or ``.jpg``), if it has one."""
    if bench_root is None:
        return None
    return next((p for p in (bench_root / "benchmarks" / task / name for name in DESIGN_NAMES) if p.is_file()), None)


def page_pairs(a: tuple[dict[str, Any], Path], b: tuple[dict[str, Any], Path], bench_root: Path | None) -> tuple[list[PagePair], list[str]]:
    """The candidates both runs kept a page of, and one line per candidate that could not be paired."""
    shots_a, shots_b = page_screenshots(*a), page_screenshots(*b)
    tasks = {t["candidate"]: t["task"] for doc, _ in (a, b) for t in doc["tasks"]}
    pairs, missing = [], []
    for key in sorted(set(shots_a) | set(shots_b) | set(tasks)):
        if key in shots_a and key in shots_b:
            pairs.append(PagePair(key, tasks[key], shots_a[key], shots_b[key], design_image(bench_root, tasks[key])))
        else:
            lacking = " and ".join(side for side, shots in (("A", shots_a), ("B", shots_b)) if key not in shots)
            missing.append(f"{key}: no page screenshot in run {lacking} (run it with --bench-page-screenshot)")
    return pairs, missing


def _rates(outcomes: list[str]) -> dict[str, Any]:
    judged = len(outcomes)
    return {"judged": judged, **{o: (outcomes.count(o) / judged if judged else None) for o in OUTCOMES}}


def visual_comparison(model: JudgeModel, a: tuple[str, dict[str, Any], Path], b: tuple[str, dict[str, Any], Path], bench_root: Path | None) -> dict[str, Any]:
    """Judge every pair of pages of runs A and B: the verdicts and B's win / tie / lose rates."""
    pairs, missing = page_pairs((a[1], a[2]), (b[1], b[2]), bench_root)
    swapped = swapped_keys([pair.key for pair in pairs])
    verdicts = [judge_pair(model, pair, pair.key in swapped) for pair in pairs]
    judged = [v for v in verdicts if v.overall is not None]
    return {
        "a": a[0],
        "b": b[0],
        "model": model.name,
        "pairs": len(pairs),
        "swapped": sum(1 for v in verdicts if v.swapped),
        "unjudged": [f"{v.key}: the answer names no verdict: {v.reason!r}" for v in verdicts if v.overall is None],
        "overall": _rates([v.overall for v in judged if v.overall is not None]),
        "by_dimension": {name: _rates([v.dimensions[name] for v in judged if name in v.dimensions]) for name in DIMENSIONS},
        "with_design": sum(1 for p in pairs if p.design is not None),
        "missing": missing,
        "verdicts": [asdict(v) for v in verdicts],
    }


def compare_visually(
    runs: list[tuple[str, dict[str, Any], Path]], judge: str, *, base_url: str | None, bench_root: Path | None, cache_dir: Path | None,
) -> list[dict[str, Any]]:
    """Every run against the first, judged by ``judge`` (openai:<model>); answers cached in ``cache_dir``."""
    from ..config import environment_value
    from ..errors import HarnessError
    from .model import JudgeCache, JudgeServer, OpenAIJudgeModel

    if not judge:
        raise HarnessError("--visual needs a vision judge model: --judge openai:<model>")
    if not judge.startswith("openai:") or not judge[len("openai:"):]:
        raise HarnessError(f"--judge {judge!r}: expected openai:<model>, a vision model on an OpenAI-compatible server")
    url = base_url or environment_value("judge_base_url") or environment_value("openai_base_url")
    if not url:
        raise HarnessError("--visual needs the judge's server: --judge-base-url URL (or BACKENDBENCH_JUDGE_BASE_URL)")
    server = JudgeServer(model=judge[len("openai:"):], base_url=str(url), api_key=environment_value("judge_api_key") or None)
    model = OpenAIJudgeModel(server, JudgeCache(cache_dir) if cache_dir is not None else None)
    return [visual_comparison(model, runs[0], run, bench_root) for run in runs[1:]]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def visual_markdown(visual: dict[str, Any]) -> str:
    """The win / tie / lose table (B against A), overall and per dimension, as Markdown."""
    a, b = visual["a"], visual["b"]
    lines = [
        (f"## Visual: {b} against {a} (judge {visual['model']}, {visual['pairs']} page pairs, {visual['with_design']} with a design image, "
         f"order swapped in {visual['swapped']})"),
        "",
        f"| dimension | {b} wins | tie | {b} loses | judged |",
        "|---|---|---|---|---|",
    ]
    rows = [("overall", visual["overall"])] + [(DIMENSIONS[name], visual["by_dimension"][name]) for name in DIMENSIONS]
    for name, rates in rows:
        lines.append(f"| {name} | {_pct(rates['win'])} | {_pct(rates['tie'])} | {_pct(rates['lose'])} | {rates['judged']} |")
    lines += [""] + [f"- unjudged {line}" for line in visual["unjudged"]] + [f"- not compared: {line}" for line in visual["missing"]]
    return "\n".join(lines).rstrip() + "\n"


def visual_html(visuals: list[dict[str, Any]]) -> str:
    """The same tables as a self-contained page (``visual.html`` beside leaderboard.html)."""
    import jinja2

    template = jinja2.Environment(autoescape=True).from_string(_HTML)
    return template.render(visuals=visuals, dimensions=DIMENSIONS, pct=_pct)


_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Pairwise visual judge</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse;margin:.5rem 0 1.5rem}
td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left}th{background:#f3f3f3}.reason{max-width:40rem;white-space:pre-wrap}</style></head>
<body><h1>Pairwise visual judge (InfiniteWeb's five dimensions)</h1>
{% for v in visuals %}
<h2>{{ v.b }} against {{ v.a }}</h2>
<p>judge {{ v.model }}; {{ v.pairs }} page pairs, {{ v.with_design }} with a design image; order swapped in {{ v.swapped }}.</p>
<table><thead><tr><th>dimension</th><th>{{ v.b }} wins</th><th>tie</th><th>{{ v.b }} loses</th><th>judged</th></tr></thead><tbody>
<tr><td>overall</td><td>{{ pct(v.overall.win) }}</td><td>{{ pct(v.overall.tie) }}</td><td>{{ pct(v.overall.lose) }}</td><td>{{ v.overall.judged }}</td></tr>
{% for name, text in dimensions.items() %}{% set r = v.by_dimension[name] %}
<tr><td>{{ text }}</td><td>{{ pct(r.win) }}</td><td>{{ pct(r.tie) }}</td><td>{{ pct(r.lose) }}</td><td>{{ r.judged }}</td></tr>
{% endfor %}</tbody></table>
<table><thead><tr><th>candidate</th><th>shown first</th><th>{{ v.b }}</th><th class="reason">the judge's answer</th></tr></thead><tbody>
{% for p in v.verdicts %}<tr><td>{{ p.key }}</td><td>{{ v.b if p.swapped else v.a }}</td><td>{{ p.overall or "unjudged" }}</td><td class="reason">{{ p.reason }}</td></tr>
{% endfor %}</tbody></table>
{% if v.missing %}<ul>{% for line in v.missing %}<li>not compared: {{ line }}</li>{% endfor %}</ul>{% endif %}
{% endfor %}
</body></html>
"""
