"""The spec's own examples, each an item checked exactly (issue 35).

spec.md: "**Email addresses** match `^[^@\\s]+@[A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)+$` and have at most
254 characters. **Phone numbers** are E.164: `^\\+[1-9][0-9]{7,14}$`"; "when `start` is later than
`end` they wrap over midnight (`22:00`–`07:00` covers `23:30` and `06:59`, not `07:00`)";
"**Timestamps** are RFC 3339 / ISO 8601 strings in UTC, e.g. `2025-03-01T12:00:00.123Z`".
The quiet-hours example is replayed at the current minute: the service's clock cannot be set,
so the window is placed so that now is its `06:59` (the last minute inside) or its `07:00` (the
end, outside).
"""

from __future__ import annotations

import pytest

from pytest_backendbench.http.timestamps import rfc3339_utc_problems

pytestmark = [pytest.mark.tier("base")]

ADDRESSES = [("email", "a@b.c", True), ("email", "a@b", False), ("email", "a@b_c.example", False), ("email", "a b@c.example", False),
             ("email", "x" * 242 + "@example.com", True), ("email", "x" * 243 + "@example.com", False),
             ("phone", "+12345678", True), ("phone", "+1234567", False), ("phone", "+012345678", False),
             ("phone", "+123456789012345", True), ("phone", "+1234567890123456", False)]


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field, value, valid", ADDRESSES, ids=[f"{f}-{v[:16]}{'...' if len(v) > 16 else ''}-{len(v)}" for f, v, _ in ADDRESSES])
def test_addresses_follow_the_spec_patterns(api, http, field, value, valid):
    r = http.post("/users", json={"username": api.unique("addr"), "password": "long-enough-1", field: value})
    if valid:
        assert api.ok(r, 201, f"register with {field} {value!r}")[field] == value
    else:
        api.assert_no_problems([api.validation_problem(r, [field], f"register with {field} {value!r}")], "address patterns")


@pytest.mark.requirement("R16")
@pytest.mark.category("side_effects")
@pytest.mark.parametrize("window, status", [((120, 1), "deferred"), ((120, 0), "sent")], ids=["now-is-06:59-inside", "now-is-07:00-the-end-outside"])
def test_the_wrapping_quiet_hours_example(api, http, window, status):
    # start two hours ahead and end at now (+1 minute): a window that wraps over midnight when start is later than end
    user = api.user()
    api.steady_minute()
    api.preferences(user, quiet_hours=api.quiet(*window))
    n = api.send(user, api.template())
    assert n["status"] == status, f"quiet hours {api.quiet(*window)} at {api.clock()}: expected {status}, got {n}"


@pytest.mark.requirement("R10")
@pytest.mark.category("api_surface")
def test_timestamps_are_rfc_3339_in_utc(api, http):
    user, n = api.notified()
    me = api.ok(http.get("/me", headers=user.headers), 200, "GET /me")
    problems = rfc3339_utc_problems((("notification.created_at", n["created_at"]), ("notification.sent_at", n["sent_at"]), ("user.created_at", me["created_at"])))
    assert not problems, "\n".join(problems)
