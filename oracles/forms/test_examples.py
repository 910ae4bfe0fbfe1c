"""The worked example of spec.md, checked exactly (issue 35).

Results: "every field of the export holding text — question titles, `short_text` answers and
options — that begins with `=`, `+`, `-` or `@` is written with a single quote `'` in front
(`=1+1` becomes `'=1+1`)". The example is tried alone in each kind of text field it names. The
precedence examples ("a closed form refuses even an invalid submission with `409 form_closed`,
and an invalid submission to a form at its limit gets `422`") are items of their own already
(REVIEW.md, Rule inventory).
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("security"), pytest.mark.cwe(1236), pytest.mark.requirement("R12")]

EXAMPLE, WRITTEN = "=1+1", "'=1+1"

# (where the example stands, the questions, the answers by title, the column of the cell)
PLACES = [
    ("question-title", [{"type": "number", "title": EXAMPLE}], {EXAMPLE: 2}, 2, 0),
    ("short-text-answer", [{"type": "short_text", "title": "Q"}], {"Q": EXAMPLE}, 2, 1),
    ("single-choice-option", [{"type": "single_choice", "title": "Q", "options": [EXAMPLE, "2"]}], {"Q": EXAMPLE}, 2, 1),
    ("multiple-choice-option", [{"type": "multiple_choice", "title": "Q", "options": [EXAMPLE, "2"]}], {"Q": [EXAMPLE]}, 2, 1),
]


@pytest.mark.parametrize("questions,answers,column,record", [pytest.param(*p[1:], id=p[0]) for p in PLACES])
def test_the_export_writes_the_example_formula_with_a_quote(api, http, questions, answers, column, record):
    built = api.build(questions=questions)
    api.answer(built, answers)
    records = api.export(built)
    assert len(records) == 2, f"a header and one record: {records}"
    cell = records[record][column]
    assert cell == WRITTEN, f"spec.md: `{EXAMPLE}` becomes `{WRITTEN}`; the export wrote {cell!r} (record {records[record]})"
