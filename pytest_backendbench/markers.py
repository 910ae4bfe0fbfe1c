"""The markers of oracle items, their one validator, and the order of oracle tiers.

Python oracle functions carry ``@pytest.mark.requirement/category/tier/weight/cwe``; Gherkin
scenarios and DB cases are given the same markers from their tags and YAML fields, so one
validator (``marker_problem``) and one set of readers serve every kind of item.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from .tasks import CATEGORIES

MARKERS = (
    "requirement(*ids): the task requirements (task.yaml ids) this oracle item checks",
    "category(name): failure category: " + ", ".join(CATEGORIES),
    "tier(name): oracle tier: base, r1, r2, ... (cumulative; --oracle-tier selects)",
    "weight(value): the item's weight in the dense score (default 1.0)",
    "cwe(*ids): the CWE number(s) a security item checks (e.g. 639 for IDOR, or 89, 79); required with category('security')",
    "db_effect(op, table=None): a database operation the item must cause (INSERT/UPDATE/DELETE/SELECT)",
    "ab_check(*ids): the app.build checks (AB-03, ...) the item stands for in the quality score Q",
)


def tier_sort_key(tier: str) -> tuple[int, int, str]:
    """base first, then r1, r2, … in numeric order, then any other name alphabetically."""
    if tier == "base":
        return (0, 0, tier)
    match = re.fullmatch(r"r(\d+)", tier)
    if match:
        return (1, int(match.group(1)), tier)
    return (2, 0, tier)


def ordered_tiers(tiers: Iterable[str]) -> list[str]:
    """The distinct tiers in cumulative order."""
    return sorted(set(tiers), key=tier_sort_key)


def item_tier(item: pytest.Item) -> str:
    """The item's oracle tier (``base`` when unmarked)."""
    marker = item.get_closest_marker("tier")
    return str(marker.args[0]) if marker and marker.args else "base"


def item_cwes(item: pytest.Item) -> list[int]:
    """Every CWE number the item's ``cwe`` marker names (validated at collection), in order."""
    marker = item.get_closest_marker("cwe")
    return [int(a) for a in marker.args] if marker is not None else []


def item_cwe(item: pytest.Item) -> int | None:
    """The first CWE number of a security item, or None (the report's legacy ``cwe`` field)."""
    cwes = item_cwes(item)
    return cwes[0] if cwes else None


def item_requirements(item: pytest.Item) -> list[str]:
    """The requirement ids the item checks."""
    return [str(a) for m in item.iter_markers("requirement") for a in m.args]


def item_category(item: pytest.Item) -> str | None:
    """The item's failure category."""
    marker = item.get_closest_marker("category")
    return str(marker.args[0]) if marker and marker.args else None


def item_weight(item: pytest.Item) -> float:
    """The item's weight in the dense score."""
    marker = item.get_closest_marker("weight")
    return float(marker.args[0]) if marker and marker.args else 1.0


def item_ab_checks(item: pytest.Item) -> list[str]:
    """app.build checks the item stands for: ``ab_check`` markers and ``@ab:AB-03`` scenario tags."""
    checks = [str(a) for m in item.iter_markers("ab_check") for a in m.args]
    tags = getattr(getattr(item, "spec", None), "tags", ()) or ()
    checks += [str(t).partition(":")[2] for t in tags if str(t).startswith("ab:")]
    return list(dict.fromkeys(c.upper() for c in checks if c))


def declared_skip(item: pytest.Item) -> bool:
    """Whether the task declared that the item may skip (a skip, skipif or xfail marker with its reason)."""
    return any(item.get_closest_marker(name) is not None for name in ("skip", "skipif", "xfail"))


def marker_problem(item: pytest.Item, known_requirements: dict[str, str]) -> str | None:
    """What is wrong with an oracle item's markers, or None; the same rules for every kind."""
    ids = item_requirements(item)
    if not ids:
        return "oracle items need @pytest.mark.requirement('R1', ...) naming task.yaml requirements"
    unknown = [r for r in ids if known_requirements and r not in known_requirements]
    if unknown:
        return f"requirement(s) {', '.join(unknown)} not in task.yaml (known: {', '.join(sorted(known_requirements))})"
    category = item.get_closest_marker("category")
    if category is None or not category.args:
        return "oracle items need @pytest.mark.category(...) with one of " + ", ".join(CATEGORIES)
    if category.args[0] not in CATEGORIES:
        return f"category {category.args[0]!r} is not one of {', '.join(CATEGORIES)}"
    weight = item.get_closest_marker("weight")
    if weight is not None and (not weight.args or not isinstance(weight.args[0], (int, float)) or weight.args[0] < 0):
        return "weight(...) takes one non-negative number"
    cwe = item.get_closest_marker("cwe")
    if cwe is not None and (not cwe.args or cwe.kwargs or not all(isinstance(a, int) and not isinstance(a, bool) and a > 0 for a in cwe.args)):
        return "cwe(...) takes one or several positive CWE numbers, e.g. @pytest.mark.cwe(639) or @pytest.mark.cwe(89, 79)"
    if category.args[0] == "security" and cwe is None:
        return "security items need @pytest.mark.cwe(<number>) naming the weakness they check (e.g. 639 for IDOR)"
    return None
