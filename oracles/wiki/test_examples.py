"""The worked examples of spec.md, each checked exactly (issue 35).

Conventions, Lines: "`"a\\nb"` has the 2 lines `a` and `b`, and `"a\\n"` has the 2 lines `a` and
the empty line"; "the empty body has no lines". A body's line count is read through the diff of
a revision with itself (Diffs: `A` may equal `B`; then `unchanged` is every line). Conventions,
slugs "e.g. `getting-started`, `faq`, `release-2-0`"; Revisions: the revert summary "by default
`"Reverted to revision N"` (N the number reverted to)". The diff example of Diffs is
`test_diff_revert.py::test_diff_of_the_spec_example`.
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R10")
@pytest.mark.parametrize("body,count", [("a\nb", 2), ("a\n", 2), ("", 0)], ids=["a-newline-b", "a-newline", "empty"])
def test_the_lines_of_the_spec_examples(api, http, editor, body, count):
    page = api.page(editor, body=body)
    got = api.ok(api.diff(page, 1, 1), 200, "the diff of revision 1 with itself")
    counts = {k: got.get(k) for k in ("removed", "added", "unchanged")}
    assert counts == {"removed": 0, "added": 0, "unchanged": count}, f"spec.md: {body!r} has {count} line(s); a diff with itself answered {counts}"


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("example", ["getting-started", "faq", "release-2-0"])
def test_the_example_slugs_are_accepted(api, http, editor, example):
    if api.call("GET", f"/pages/{example}").status_code == 200:  # left by an earlier run against this service
        api.ok(api.delete(example), 204, f"delete the page {example} an earlier run made")
    made = api.ok(api.call("POST", "/pages", editor, {"slug": example, "title": "Example", "body": "text"}), 201, f"a page at the example slug {example}")
    assert made.get("slug") == example, f"the page has the slug {example}: {made}"
    api.ok(api.delete(example), 204, "delete it again")


@pytest.mark.requirement("R11")
def test_the_default_revert_summary_names_the_revision_reverted_to(api, http, editor):
    page = api.page(editor, body="one")
    api.edit(page, editor, body="two")
    api.edit(page, editor, body="three")
    api.ok(api.revert(page, editor, revision=1), 200, "revert to revision 1 from revision 3")
    newest = api.history(page)["items"][0]
    assert (newest.get("number"), newest.get("summary")) == (4, "Reverted to revision 1"), f"spec.md: summary \"Reverted to revision N\", N the number reverted to: {newest}"
