"""The spec's own worked example, checked exactly (issue 35).

spec.md API conventions: "responses give them in UTC (e.g. `2030-05-01T18:00:00Z`). A `starts_at`
without an offset is taken as UTC." The example instant, sent with `Z`, without an offset and
with another offset, is answered as that instant in UTC (`Z` or a zero offset: "e.g." leaves the
spelling open).
"""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("r1"), pytest.mark.category("api_surface")]

EXAMPLE = dt.datetime(2030, 5, 1, 18, 0, tzinfo=dt.timezone.utc)


@pytest.mark.requirement("R2", "R3")
@pytest.mark.parametrize("sent", ["2030-05-01T18:00:00Z", "2030-05-01T18:00:00", "2030-05-01T20:00:00+02:00"], ids=["z", "no-offset", "plus-2"])
def test_the_example_instant_is_answered_in_utc(api, http, sent):
    event = api.event(starts_at=sent)
    for where, got in (("POST", event), ("GET", api.get_event(event)), ("list", api.listed(event)[0])):
        problem = api.utc_problem(got.get("starts_at"), f"{where} starts_at for {sent}")
        assert problem is None, problem
        assert api.instant(got["starts_at"]) == EXAMPLE, f"{where}: {sent} is the spec's 2030-05-01T18:00:00Z, answered {got['starts_at']!r}"
