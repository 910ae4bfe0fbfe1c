"""Passages careful readers found open, now settled in spec.md (issue 15); each item tests the sentence from both sides.

- Errors: "a path that exists but not with the request's method gets `405` (`method_not_allowed`)".
- Lists: "An empty value (`limit=`, `offset=`) is invalid too: only an absent parameter takes its default."
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.account_items import empty_paging_item, wrong_method_item

pytestmark = [pytest.mark.tier("base")]


test_a_method_a_path_does_not_have_gets_405 = wrong_method_item("R26", caller="viewer")


test_an_empty_limit_or_offset_is_invalid_not_the_default = empty_paging_item("R11", "R26", caller="viewer", path="/flags", other_path="/audit")
