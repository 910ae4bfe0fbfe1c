"""SLA policies (spec.md: SLA policies): one per priority, admins manage them, agents read them."""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.tier("base")]

ORDER = ["low", "normal", "high", "urgent"]


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
@pytest.mark.db_effect("INSERT", table="sla_policies")
def test_put_answers_the_policy_and_the_list_is_in_priority_order(api, http):
    for i, priority in enumerate(reversed(ORDER)):
        got = api.policy(priority, 600 + i, 7200 + i)
        assert got == {**got, "priority": priority, "first_response_s": 600 + i, "resolution_s": 7200 + i}, f"PUT answers the policy: {got}"
    agent = api.agent()
    items = api.ok(api.call(agent, "GET", "/api/sla"), 200, "GET /api/sla as an agent")["items"]
    assert [p["priority"] for p in items] == ORDER, f"the four policies in the order low, normal, high, urgent: {items}"
    assert [(p["first_response_s"], p["resolution_s"]) for p in items] == [(603, 7203), (602, 7202), (601, 7201), (600, 7200)], f"targets: {items}"


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
def test_put_replaces_the_policy(api, http, db):
    api.policy("high", 100, 1000)
    api.policy("high", 200, 2000)
    items = api.ok(api.call(api.admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert [(p["first_response_s"], p["resolution_s"]) for p in items if p["priority"] == "high"] == [(200, 2000)], f"one high policy: {items}"
    rows = db.query("SELECT first_response_s, resolution_s FROM sla_policies WHERE priority = 'high'")
    assert [(r["first_response_s"], r["resolution_s"]) for r in rows] == [(200, 2000)], f"one row for high: {rows}"


SLA_INVALID = [
    ("zero", {"first_response_s": 0, "resolution_s": 60}, ["first_response_s"]),
    ("over-a-year", {"first_response_s": 60, "resolution_s": 31_536_001}, ["resolution_s"]),
    ("fraction", {"first_response_s": 1.5, "resolution_s": 60}, ["first_response_s"]),
    ("boolean", {"first_response_s": 60, "resolution_s": True}, ["resolution_s"]),
    ("string", {"first_response_s": "60", "resolution_s": 60}, ["first_response_s"]),
    ("nulls", {"first_response_s": None, "resolution_s": None}, ["first_response_s", "resolution_s"]),
    ("missing", {}, ["first_response_s", "resolution_s"]),
]


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case, body, fields", SLA_INVALID, ids=[c[0] for c in SLA_INVALID])
def test_invalid_targets_get_422_and_keep_the_policy(api, http, case, body, fields):
    api.policy("low", 111, 2222)
    r = api.call(api.admin, "PUT", "/api/sla/low", json=body)
    api.assert_no_problems([api.validation_problem(r, fields, f"PUT /api/sla/low {case}")], "policy validation")
    items = api.ok(api.call(api.admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert [(p["first_response_s"], p["resolution_s"]) for p in items if p["priority"] == "low"] == [(111, 2222)], "a refused PUT changes nothing"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_targets_from_one_second_to_one_year_are_valid(api, http):
    assert api.policy("normal", 1, 31_536_000)["resolution_s"] == 31_536_000
    assert api.policy("normal", 31_536_000, 1)["first_response_s"] == 31_536_000


@pytest.mark.requirement("R6")
@pytest.mark.category("api_surface")
@pytest.mark.parametrize("method", ["PUT", "DELETE"])
def test_an_unknown_priority_gets_404(api, http, method):
    for priority in ("critical", "URGENT", "1"):
        r = api.call(api.admin, method, f"/api/sla/{priority}", json={"first_response_s": 60, "resolution_s": 60})
        api.error(r, 404, "not_found", f"{method} /api/sla/{priority}")


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
@pytest.mark.db_effect("DELETE", table="sla_policies")
def test_delete_removes_the_policy_then_answers_404(api, http):
    api.policy("low", 60, 600)
    assert api.ok(api.call(api.admin, "DELETE", "/api/sla/low"), 204, "DELETE /api/sla/low") is None
    items = api.ok(api.call(api.admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert "low" not in [p["priority"] for p in items], f"the deleted policy is not listed: {items}"
    api.error(api.call(api.admin, "DELETE", "/api/sla/low"), 404, "not_found", "deleting a priority without a policy")


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["agent", "customer"])
def test_only_admins_change_policies(api, http, role):
    actor = api.agent() if role == "agent" else api.customer()
    api.policy("urgent", 321, 4321)
    api.error(api.call(actor, "PUT", "/api/sla/urgent", json={"first_response_s": 1, "resolution_s": 1}), 403, "forbidden", f"an {role} PUT")
    api.error(api.call(actor, "DELETE", "/api/sla/urgent"), 403, "forbidden", f"an {role} DELETE")
    items = api.ok(api.call(api.admin, "GET", "/api/sla"), 200, "GET /api/sla")["items"]
    assert [(p["first_response_s"], p["resolution_s"]) for p in items if p["priority"] == "urgent"] == [(321, 4321)], "refused changes change nothing"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_customers_cannot_read_policies(api, http):
    customer = api.customer()
    api.error(api.call(customer, "GET", "/api/sla"), 403, "forbidden", "a customer reading SLA policies")
