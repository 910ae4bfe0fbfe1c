"""bench/oracle_order.py: the reorderings and how an alone run's outcome is read.

The end-to-end property (every task's reference in every order and alone) is the script's own
run, which needs the engine and minutes; these checks keep its parts honest.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_oracle_order", ROOT / "bench" / "oracle_order.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_oracle_order", module)
    spec.loader.exec_module(module)
    return module


oracle_order = _module()


def test_reverse_shuffle_and_twice() -> None:
    items = list(range(10))
    assert oracle_order._reordered(items, "reverse") == items[::-1]
    shuffled = oracle_order._reordered(items, "shuffle:7")
    assert sorted(shuffled) == items and shuffled != items
    assert shuffled == oracle_order._reordered(items, "shuffle:7"), "a seed gives the same order every time"
    assert oracle_order._reordered(items, "twice") == items + items


@pytest.mark.parametrize("order", ["sideways", "shuffle:x"])
def test_an_unknown_order_is_a_usage_error(order: str) -> None:
    with pytest.raises(pytest.UsageError, match="oracle-order"):
        oracle_order._reordered([1, 2], order)


def test_failed_and_errored_node_ids_are_read_even_with_dashes_in_names() -> None:
    output = (
        "FAILED oracles/t/test_a.py::test_x[case-1] - AssertionError: no\n"
        "ERROR oracles/t/features/a.feature::A visitor sees - the list - [harness error] boom\n"
    )
    problems = [f"{kind} {rest}" for kind, rest in oracle_order._OUTCOME.findall(output)]
    nodes = ["oracles/t/test_a.py::test_x[case-1]", "oracles/t/test_a.py::test_x[case-10]",
             "oracles/t/features/a.feature::A visitor sees", "oracles/t/features/a.feature::A visitor sees - the list"]
    assert [oracle_order._node_of(p, nodes) for p in problems] == [nodes[0], nodes[3]]
