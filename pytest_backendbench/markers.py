"""The markers of oracle items, the kinds of task items, and the one validator of both.

Python oracle functions carry ``@pytest.mark.requirement/category/tier/weight/cwe``; Gherkin
scenarios and DB cases are given the same markers from their tags and YAML fields, so one
validator (``marker_problem``) and one set of readers serve every kind of item.
"""

from __future__ import annotations

import enum

import pytest

from .tasks import CATEGORIES

MARKERS = (
    "requirement(*ids): the task requirements (task.yaml ids) this oracle item checks",
    "category(name): failure category: " + ", ".join(CATEGORIES),
    "tier(name): oracle tier: base, r1, r2, ... (cumulative; --oracle-tier selects)",
    "weight(value): the item's weight in the dense score (default 1.0)",
    "cwe(id): the CWE number a security item checks (e.g. 639 for IDOR); required with category('security')",
    "db_effect(op, table=None): a database operation the item must cause (INSERT/UPDATE/DELETE/SELECT)",
)


class ItemKind(str, enum.Enum):
    """What a task item checks; the value is the report's ``kind`` field."""

    BUILD = "build"
    BOOT = "boot"
    SMOKE = "smoke"
    HTTP = "http"
    BDD = "bdd"
    SNAPSHOT = "snapshot"

    @property
    def order(self) -> int:
        """Run order within one candidate: build, boot, smoke, then the oracle items."""
        return list(ItemKind).index(self)

    @property
    def is_oracle(self) -> bool:
        """Oracle items check behaviour (Test.Acc, Req.Acc); the others check viability."""
        return self in (ItemKind.HTTP, ItemKind.BDD, ItemKind.SNAPSHOT)

    @property
    def needs_service(self) -> bool:
        """Items that talk to the running service (their failures may be a crash)."""
        return self.is_oracle


def item_kind(item: pytest.Item) -> ItemKind:
    """HTTP for Python oracle functions, else the item class's declared ``backendbench_kind``."""
    return ItemKind(getattr(item, "backendbench_kind", ItemKind.HTTP.value))


def item_tier(item: pytest.Item) -> str:
    """The item's oracle tier (``base`` when unmarked)."""
    marker = item.get_closest_marker("tier")
    return str(marker.args[0]) if marker and marker.args else "base"


def item_cwe(item: pytest.Item) -> int | None:
    """The CWE number of a security item (validated at collection), or None."""
    marker = item.get_closest_marker("cwe")
    return int(marker.args[0]) if marker is not None and marker.args else None


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
    if cwe is not None and (len(cwe.args) != 1 or not isinstance(cwe.args[0], int) or isinstance(cwe.args[0], bool) or cwe.args[0] <= 0):
        return "cwe(...) takes one positive CWE number, e.g. @pytest.mark.cwe(639)"
    if category.args[0] == "security" and cwe is None:
        return "security items need @pytest.mark.cwe(<number>) naming the weakness they check (e.g. 639 for IDOR)"
    return None
