"""The spec's own worked example of file names, checked exactly (issue 35).

spec.md, File names: "(`...`, `.env`, `a..b`, `%2e%2e`, `<img src=x onerror=alert(1)>.html` and
`名前.txt` are valid and distinct from one another)". One user uploads all six; each is a file
of its own, answered and listed exactly as sent, with its own bytes.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("validation")]

EXAMPLE_NAMES = ["...", ".env", "a..b", "%2e%2e", "<img src=x onerror=alert(1)>.html", "\u540d\u524d.txt"]


@pytest.mark.requirement("R6", "R10")
def test_the_example_names_are_valid_and_distinct(api, http, alice):
    made = {name: api.put_file(alice, name, f"content of {name}".encode()) for name in EXAMPLE_NAMES}
    assert [made[n].get("name") for n in EXAMPLE_NAMES] == EXAMPLE_NAMES, f"each answered as sent: {[f.get('name') for f in made.values()]}"
    assert len({f["id"] for f in made.values()}) == len(EXAMPLE_NAMES), "six distinct files"
    assert api.names(alice) == sorted(EXAMPLE_NAMES), f"listed in code point order: {api.names(alice)}"
    for name, file in made.items():
        assert api.content(alice, file).content == f"content of {name}".encode(), f"{name!r} keeps its own bytes"
