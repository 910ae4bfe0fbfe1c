"""Diffs between revisions and reverts (spec.md: Diffs, Revisions and history `revert`, Conventions: Lines)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]


def lcs(a: list[str], b: list[str]) -> int:
    """Length of a longest common subsequence (plain dynamic programming; the oracle's own)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b):
            cur.append(prev[j] + 1 if x == y else max(prev[j + 1], cur[j]))
        prev = cur
    return prev[-1]


def lines(body: str) -> list[str]:
    return body.split("\n") if body else []


def expected(old: str, new: str, frm: int, to: int, title_changed: bool = False) -> dict[str, object]:
    common = lcs(lines(old), lines(new))
    return {"from": frm, "to": to, "removed": len(lines(old)) - common, "added": len(lines(new)) - common, "unchanged": common, "title_changed": title_changed}


def two_revisions(api, editor, old: str, new: str, title: str | None = None):
    page = api.page(editor, body=old)
    api.edit(page, editor, body=new, **({"title": title} if title else {}))
    return page


def diff_of(api, page, frm, to) -> dict[str, object]:
    r = api.diff(page, frm, to)
    body = api.ok(r, 200, f"diff {frm} -> {to}")
    return {k: body.get(k) for k in ("from", "to", "removed", "added", "unchanged", "title_changed")}


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_diff_of_the_spec_example(api, http, editor, reader):
    page = two_revisions(api, editor, "a\nb\nc", "a\nx\nc\nd")
    got = diff_of(api, page, 1, 2)
    assert got == {"from": 1, "to": 2, "removed": 1, "added": 2, "unchanged": 2, "title_changed": False}, f"the spec's example: {got}"
    assert api.ok(api.diff(page, 1, 2, by=reader), 200, "a reader reads diffs")["unchanged"] == 2


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
@pytest.mark.parametrize(
    "old, new",
    [
        ("a\nb\nc\nd", "d\nc\nb\na"),  # many alignments of equal length exist
        ("x\ny\nx\ny\nx", "y\nx\ny"),
        ("same\nsame\nsame", "same"),
        ("", "one\ntwo"),
        ("one\ntwo", ""),
        ("a\n", "a"),  # a trailing line feed adds an empty line
        ("a\r\nb", "a\nb"),  # \r is an ordinary character
        ("\n\n", "\n"),
        ("intro\n" + "\n".join(f"l{i}" for i in range(40)), "\n".join(f"l{i}" for i in range(0, 40, 2)) + "\nend"),
    ],
    ids=["reversed", "repeats", "duplicates", "from-empty", "to-empty", "trailing-newline", "carriage-return", "blank-lines", "long"],
)
def test_diff_counts_follow_the_longest_common_subsequence(api, http, editor, old, new):
    page = two_revisions(api, editor, old, new)
    assert diff_of(api, page, 1, 2) == expected(old, new, 1, 2), f"diff of {old!r:.40} -> {new!r:.40}"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_diff_in_reverse_and_of_a_revision_with_itself(api, http, editor):
    page = two_revisions(api, editor, "a\nb", "b\nc\nd", title="Changed title")
    assert diff_of(api, page, 2, 1) == expected("b\nc\nd", "a\nb", 2, 1, True), "from may be greater than to"
    assert diff_of(api, page, 2, 2) == {"from": 2, "to": 2, "removed": 0, "added": 0, "unchanged": 3, "title_changed": False}, "a revision against itself"


@pytest.mark.requirement("R10")
@pytest.mark.category("state")
def test_title_changed_compares_the_two_titles(api, http, editor):
    page = api.page(editor, title="First", body="x")
    api.edit(page, editor, title="Second", body="x")
    api.edit(page, editor, title="First", body="y")
    assert diff_of(api, page, 1, 2)["title_changed"] is True and diff_of(api, page, 1, 3)["title_changed"] is False, "titles of revisions 1, 2, 3"


@pytest.mark.requirement("R10", "R16")
@pytest.mark.category("validation")
def test_diff_parameters_are_validated(api, http, editor):
    page = two_revisions(api, editor, "a", "b")
    path = f"/pages/{page['slug']}/diff"
    problems = [
        api.validation_problem(api.call("GET", path, to=2), ["from"], "no from"),
        api.validation_problem(api.call("GET", path, **{"from": 1}), ["to"], "no to"),
        api.validation_problem(api.call("GET", path), ["from", "to"], "neither"),
        api.validation_problem(api.call("GET", path, **{"from": "x", "to": "0"}), ["from", "to"], "from=x, to=0"),
        api.validation_problem(api.call("GET", path, **{"from": "-1", "to": "1.5"}), ["from", "to"], "from=-1, to=1.5"),
        api.validation_problem(api.call("GET", path, **{"from": "", "to": "2"}), ["from"], "an empty from"),
    ]
    api.assert_no_problems(problems, "invalid diff parameters were accepted")


@pytest.mark.requirement("R10", "R16")
@pytest.mark.category("api_surface")
def test_diff_of_a_missing_revision_gets_404(api, http, editor):
    page = two_revisions(api, editor, "a", "b")
    for frm, to in ((1, 3), (9, 1), (3, 4), (1, 99999999999)):
        api.error(api.diff(page, frm, to), 404, "not_found", f"diff {frm} -> {to} on a page with 2 revisions")
    api.assert_no_problems([api.validation_problem(api.diff(page, 5, "x"), ["to"], "a missing from with an invalid to: 422 first")], "422 before the diff's 404")


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="revisions")
def test_revert_creates_a_new_revision_with_the_old_text(api, http, editor):
    page = api.page(editor, title="T1", body="original")
    api.edit(page, editor, body="vandalised", title="T2")
    r = api.revert(page, editor, revision=1)
    assert r.status_code == 200, f"revert to revision 1: {api.brief(r)}"
    got = r.json()
    assert (got.get("revision"), got.get("title"), got.get("body")) == (3, "T1", "original"), f"the page after the revert: {got}"
    third = api.revision(page, 3)
    assert (third["body"], third["title"], third["summary"], third["author"]) == ("original", "T1", "Reverted to revision 1", editor.username), f"revision 3: {third}"
    assert api.numbers(page) == [3, 2, 1] and api.revision(page, 2)["body"] == "vandalised", "older revisions stay"


@pytest.mark.requirement("R11")
@pytest.mark.category("state")
def test_revert_takes_the_summary_sent(api, http, editor):
    page = api.page(editor, body="a")
    api.edit(page, editor, body="b")
    api.edit(page, editor, body="c")
    got = api.ok(api.revert(page, editor, revision=2, summary="undo c"), 200, "revert with a summary")
    assert (got["revision"], got["body"]) == (4, "b"), f"revert to revision 2: {got}"
    assert api.revision(page, 4)["summary"] == "undo c", "the summary sent"


@pytest.mark.requirement("R11", "R7")
@pytest.mark.category("state")
def test_revert_to_the_current_content_creates_nothing(api, http, editor):
    page = api.page(editor, body="a")
    api.edit(page, editor, body="b")
    api.edit(page, editor, body="a")
    for number in (3, 1):
        got = api.ok(api.revert(page, editor, revision=number), 200, f"revert to revision {number} whose text is current")
        assert got["revision"] == 3, f"nothing created: {got}"
    assert api.numbers(page) == [3, 2, 1]


@pytest.mark.requirement("R11", "R16")
@pytest.mark.category("validation")
def test_revert_validation(api, http, editor):
    page = api.page(editor)
    api.edit(page, editor)
    problems = [api.validation_problem(api.revert(page, editor, revision=v), ["revision"], f"revision={v!r}") for v in (3, 0, -2, 1.5, "1", None, True, 10**12)]
    problems.append(api.validation_problem(api.revert(page, editor), ["revision"], "no revision"))
    problems.append(api.validation_problem(api.revert(page, editor, revision=1, summary="s" * 501), ["summary"], "a long summary"))
    problems.append(api.validation_problem(api.revert(page, editor, revision=7, summary=5), ["revision", "summary"], "both invalid"))
    api.assert_no_problems(problems, "invalid reverts were accepted")
    assert api.numbers(page) == [2, 1], "refused reverts created nothing"


@pytest.mark.requirement("R11", "R10")
@pytest.mark.category("workflow")
def test_diff_against_a_revert_shows_no_change(api, http, editor):
    page = api.page(editor, body="keep\nthis")
    api.edit(page, editor, body="spam\nspam\nspam")
    api.ok(api.revert(page, editor, revision=1), 200, "revert")
    assert diff_of(api, page, 1, 3) == {"from": 1, "to": 3, "removed": 0, "added": 0, "unchanged": 2, "title_changed": False}
    assert diff_of(api, page, 2, 3) == expected("spam\nspam\nspam", "keep\nthis", 2, 3)
