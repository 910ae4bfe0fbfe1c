"""Results: the per-question summary and the CSV export (spec.md: Results)."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("r1")]

ROWS = [
    {"Your name": "Ada", "Guests": 1, "Main course": "Fish", "Extras": ["Bread", "Cake"]},
    {"Your name": "Bo", "Guests": 4, "Main course": "Fish", "Extras": ["Cake"]},
    {"Your name": "Cy", "Main course": "Pasta"},
]


def close(a, b) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and abs(a - b) < 1e-6


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_the_summary_counts_every_option(api, http):
    built = api.build()
    for row in ROWS:
        api.answer(built, row)
    summary = api.summary(built)
    assert summary.get("response_count") == 3, f"response_count: {summary}"
    entries = summary.get("questions") or []
    assert [e.get("question_id") for e in entries] == [int(built.qids[t]) for t in ("Your name", "Guests", "Main course", "Extras")], f"one entry per question in order: {entries}"
    assert [e.get("answered") for e in entries] == [3, 2, 3, 2], f"answered counts the responses that answered each: {entries}"
    assert entries[2].get("counts") == {"Fish": 2, "Pasta": 1, "Salad": 0}, f"single choice counts, also for options nobody chose: {entries[2]}"
    assert entries[3].get("counts") == {"Bread": 1, "Wine": 0, "Cake": 2, "Soup": 0}, f"multiple choice counts every selection: {entries[3]}"
    assert (entries[0].get("type"), entries[0].get("title")) == ("short_text", "Your name"), f"type and title: {entries[0]}"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_the_summary_gives_mean_min_and_max_of_numbers(api, http):
    built = api.build(questions=[{"type": "number", "title": "Score", "min": -10, "max": 10}])
    for value in (2, -3.5, 7, 0):
        api.answer(built, {"Score": value})
    entry = api.summary(built)["questions"][0]
    assert close(entry.get("mean"), 1.375) and close(entry.get("min"), -3.5) and close(entry.get("max"), 7), f"mean 1.375, min -3.5, max 7: {entry}"
    assert entry.get("answered") == 4, f"{entry}"


@pytest.mark.requirement("R11")
@pytest.mark.category("api_surface")
def test_an_empty_summary_has_nulls_and_zeros(api, http):
    built = api.build()
    summary = api.summary(built)
    assert summary.get("response_count") == 0, f"{summary}"
    number = summary["questions"][1]
    assert (number.get("answered"), number.get("mean"), number.get("min"), number.get("max")) == (0, None, None, None), f"no answers: nulls: {number}"
    assert summary["questions"][2].get("counts") == {"Fish": 0, "Pasta": 0, "Salad": 0}, f"{summary['questions'][2]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_the_export_is_csv_with_a_header_of_titles(api, http):
    built = api.build()
    made = [api.answer(built, row) for row in ROWS]
    r = api.get(built.owner, f"/api/forms/{built.id}/export.csv")
    assert r.status_code == 200, api.brief(r)
    media = (r.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    assert media == "text/csv", f"Content-Type text/csv, got {media!r}"
    records = api.parse_csv(r.content.decode("utf-8-sig"))
    assert records[0] == ["response_id", "submitted_at", "Your name", "Guests", "Main course", "Extras"], f"the header: {records[0]}"
    assert [rec[0] for rec in records[1:]] == [str(m["id"]) for m in made], f"one record per response in submission order: {records}"
    # the number column is compared as numbers: 1 may be written 1 or 1.0
    assert [[r[2], r[4], r[5]] for r in records[1:]] == [["Ada", "Fish", "Bread; Cake"], ["Bo", "Fish", "Cake"], ["Cy", "Pasta", ""]], (
        f"answers as text, multiple choices joined with '; ', unanswered empty: {records[1:]}"
    )
    assert [float(r[3]) for r in records[1:3]] == [1, 4] and records[3][3] == "", f"numbers, and an empty field when unanswered: {records[1:]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_the_export_joins_choices_in_option_order(api, http):
    built = api.build()
    api.answer(built, {"Your name": "Dee", "Main course": "Salad", "Extras": ["Soup", "Bread"]})
    records = api.export(built)
    assert records[1][5] == "Bread; Soup", f"chosen options in the question's option order, joined with '; ': {records[1]}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_the_export_quotes_commas_quotes_and_line_breaks(api, http):
    built = api.build(questions=[{"type": "short_text", "title": 'Say "hi", please'}, {"type": "short_text", "title": "Notes"}])
    text = 'one, "two"\r\nthree'
    api.answer(built, {'Say "hi", please': text, "Notes": "plain"})
    r = api.get(built.owner, f"/api/forms/{built.id}/export.csv")
    raw = r.content.decode("utf-8-sig")
    assert '"Say ""hi"", please"' in raw, f"a field with a comma or quote is quoted, inner quotes doubled: {raw[:300]!r}"
    records = api.parse_csv(raw)
    assert records[0][2:] == ['Say "hi", please', "Notes"] and records[1][2:] == [text, "plain"], f"the text survives a CSV reader: {records}"
    # the header's end and the one inside the quoted answer at least; a line break is CRLF throughout
    assert raw.count("\r\n") >= 2 and raw.count("\n") == raw.count("\r\n"), f"records end in CRLF: {raw!r}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_the_export_times_are_the_responses_created_at(api, http):
    built = api.build()
    made = api.answer(built, ROWS[0])
    records = api.export(built)
    from datetime import datetime

    def instant(s):
        return datetime.fromisoformat(s.replace("Z", "+00:00"))

    got = instant(records[1][1])
    assert got.utcoffset() is not None and got.utcoffset().total_seconds() == 0, f"submitted_at in UTC: {records[1][1]!r}"
    # the same instant; a coarser rendering (whole seconds) of it is still it
    assert abs((got - instant(made["created_at"])).total_seconds()) < 1, f"submitted_at is the response's created_at: {records[1][1]!r} vs {made['created_at']!r}"


@pytest.mark.requirement("R12")
@pytest.mark.category("api_surface")
def test_an_export_without_responses_is_the_header(api, http):
    built = api.build()
    assert api.export(built) == [["response_id", "submitted_at", "Your name", "Guests", "Main course", "Extras"]], "only the header"
