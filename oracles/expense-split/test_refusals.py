"""Refused requests change nothing, guards condition by condition, ids in bodies (issue 35).

spec.md: "the rejected request changes nothing"; "Setting `active` to `false` ... else
`409 balance_not_zero` (nothing changes)"; "An inactive member ... cannot be the payer or an ower
of a new or replaced bill"; "A member or bill id of another project ... used in a body (as payer
or ower) it is invalid (`422`)". Every field of a body is made invalid in turn with the others
valid (a service that stores the valid ones while it validates is caught whichever it reads
first), then the state is read back and the statement log asked for writes.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_backendbench.http.refusals import one_invalid_field, refused_unchanged

pytestmark = [pytest.mark.tier("r1")]

# Bodies name members by role ("@a"); an item resolves the roles to the ids the service chose.
PROJECT = {"slug": "@slug", "name": "Refused trip", "password": "a-long-password"}
MEMBER = {"name": "Nia", "weight": 3}
PATCH = {"name": "Renamed", "weight": 7, "active": False}
BILL = {"payer_id": "@b", "amount_cents": 1500, "date": "2030-04-01", "description": "After", "owers": ["@a", "@b"]}


def resolve(value: Any, ids: dict[str, Any]) -> Any:
    """``value`` with every role string ("@a") replaced by its id."""
    if isinstance(value, dict):
        return {k: resolve(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, ids) for v in value]
    return ids.get(value, value) if isinstance(value, str) else value


def read_back(api, project) -> dict[str, Any]:
    """Everything a bill or member change could move, as the API answers it."""
    keys = ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares")
    return {"members": [api.doc(m, ("id", "name", "weight", "active")) for m in api.members(project)],
            "bills": [api.doc(b, keys) for b in api.bills(project)], "balances": api.balances(project),
            "settlements": api.settlements(project)}


@pytest.fixture
def group(api):
    """A project with active members a and b (weight 1), an inactive member, and a bill "Before": a pays 1000 for a."""
    project = api.project()
    a, b, idle = (api.member(project, name) for name in ("Ada", "Ben", "Idle"))
    api.ok(api.patch_member(project, idle, active=False), 200, "deactivate Idle at zero")
    bill = api.bill(project, a, [a], amount=1000, date="2030-01-15", description="Before")
    return project, {"@a": a["id"], "@b": b["id"], "@idle": idle["id"], "@bill": bill["id"]}


def refused_without_writes(api, db, send, read, fields: list[str] | None, what: str, status: int = 422, code: str = "validation_error") -> None:
    """``send()`` is refused as stated, the API reads the same before and after, and the statement log holds no write."""
    __tracebackhide__ = True
    refused_unchanged(api, send, read, what, fields=fields, status=status, code=code, db=db)


# ---------------------------------------------------------------- one invalid field, each position


@pytest.mark.requirement("R2")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(PROJECT, {"slug": ["-starts-with-dash", "ab"], "name": "   ", "password": "short"}))
def test_a_refused_project_stores_nothing(api, http, db, field, body):
    slug = api.fresh_slug()
    body = resolve(body, {"@slug": slug})
    refused_without_writes(api, db, lambda: http.post("/api/projects", json=body), lambda: api.post_token(body["slug"], body["password"]).status_code,
                           [field], f"a project with an invalid {field} {body}")
    assert db.scalar("SELECT count(*) FROM projects WHERE slug = %s", (body["slug"],)) == 0, "no project row"
    api.project(slug=slug)  # the slug is still free


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(MEMBER, {"name": ["", "n" * 61], "weight": [0, 101, True]}))
def test_a_refused_member_is_not_added(api, http, db, group, field, body):
    project, _ = group
    refused_without_writes(api, db, lambda: api.post_member(project, **body), lambda: read_back(api, project), [field], f"a member with an invalid {field}")


@pytest.mark.requirement("R4")
@pytest.mark.category("validation")
@pytest.mark.parametrize("field,body", one_invalid_field(PATCH, {"name": ["  ", "n" * 61], "weight": [0, 2.5], "active": ["false", 0]}))
def test_a_refused_change_changes_no_field(api, http, db, group, field, body):
    project, ids = group
    refused_without_writes(api, db, lambda: api.patch_member(project, ids["@b"], **body), lambda: read_back(api, project),
                           [field], f"a change of Ben with an invalid {field} (the other fields valid)")


BAD_BILL_FIELDS = {"payer_id": ["@idle", "1"], "amount_cents": [0, 10_000_001], "date": ["2030-02-30"], "description": [" "],
                   "owers": [["@a", "@a"], ["@a", "@idle"], []]}


@pytest.mark.requirement("R5")
@pytest.mark.category("validation")
@pytest.mark.parametrize("verb", ["POST", "PUT"])
@pytest.mark.parametrize("field,body", one_invalid_field(BILL, BAD_BILL_FIELDS))
def test_a_refused_bill_writes_nothing(api, http, db, group, verb, field, body):
    project, ids = group
    body = resolve(body, ids)
    send = (lambda: api.post_bill(project, body)) if verb == "POST" else (lambda: api.put_bill(project, ids["@bill"], body))
    refused_without_writes(api, db, send, lambda: read_back(api, project), [field], f"{verb} a bill with an invalid {field} {body}")


# ---------------------------------------------------------------- 409 refusals with the other fields valid


def conflict_case(api, http, project, ids, case):
    """Set up ``case`` and return the refused request to send."""
    if case == "new-member-taken-name":
        return lambda: api.post_member(project, name="Ada", weight=5)
    if case == "rename-onto-active-name":
        return lambda: api.patch_member(project, ids["@b"], name="Ada", weight=5)
    if case == "rename-onto-inactive-name":
        return lambda: api.patch_member(project, ids["@b"], name="Idle", weight=5)
    if case == "deactivate-with-balance":
        api.bill(project, ids["@a"], [ids["@b"]], amount=300)
        return lambda: api.patch_member(project, ids["@b"], active=False, name="Benny", weight=5)
    raise AssertionError(case)


CONFLICTS = [("new-member-taken-name", "member_exists"), ("rename-onto-active-name", "member_exists"),
             ("rename-onto-inactive-name", "member_exists"), ("deactivate-with-balance", "balance_not_zero")]


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
@pytest.mark.parametrize("case,code", CONFLICTS, ids=[c for c, _ in CONFLICTS])
def test_a_409_refusal_changes_no_other_field(api, http, db, group, case, code):
    project, ids = group
    send = conflict_case(api, http, project, ids, case)
    refused_without_writes(api, db, send, lambda: read_back(api, project), None, f"{case} (409 {code})", status=409, code=code)


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_a_taken_slug_stores_nothing(api, http, db):
    project = api.project()
    refused_without_writes(api, db, lambda: api.create_project(slug=project.slug, name="Other", password="other-password"),
                           lambda: api.ok(api.get(project), 200, "read the project"), None, "the slug again", status=409, code="slug_taken")


# ---------------------------------------------------------------- guards condition by condition


@pytest.mark.requirement("R4", "R5")
@pytest.mark.category("state")
@pytest.mark.parametrize("role", ["owers", "payer_id"])
def test_a_member_deactivated_after_the_bill_cannot_stay_on_its_replacement(api, http, db, role):
    """Inactive, not newly added: the member was on the bill before; the balance is brought back to 0 by a payment, then deactivated."""
    project = api.project()
    a, b = api.member(project, "Ada"), api.member(project, "Ben")
    payer, ower = (a, b) if role == "owers" else (b, a)
    leaving = b  # the ower in one case, the payer in the other
    bill = api.bill(project, payer, [ower], amount=600, description="Dinner")
    api.bill(project, ower, [payer], amount=600, description="Paid back")
    assert api.balances(project) == {a["id"]: 0, b["id"]: 0}, "setup: everybody at 0"
    api.ok(api.patch_member(project, leaving, active=False), 200, "deactivate Ben at zero")
    same = api.bill_body(payer, [ower], amount=600, description="Dinner")
    refused_without_writes(api, db, lambda: api.put_bill(project, bill, same), lambda: read_back(api, project), [role],
                           f"replacing the bill unchanged while Ben ({role}) is inactive")
    refused_without_writes(api, db, lambda: api.put_bill(project, bill, {**same, "amount_cents": 700}), lambda: read_back(api, project), [role],
                           f"replacing the bill's amount while Ben ({role}) is inactive")
    api.ok(api.patch_member(project, leaving, active=True), 200, "reactivate Ben")
    assert api.ok(api.put_bill(project, bill, same), 200, "the same replacement once Ben is active again")["owers"] == [ower["id"]]


@pytest.mark.requirement("R4", "R7")
@pytest.mark.category("state")
@pytest.mark.parametrize("undo", ["delete-the-bill", "replace-without-the-member", "pay-back-after-a-weight-change"])
def test_deactivation_follows_the_balance_not_the_bills(api, http, undo):
    """The balance decides, however it came back to 0, and old bills keep their shares when weights change."""
    project = api.project()
    a, b = api.member(project, "Ada"), api.member(project, "Ben")
    bill = api.bill(project, a, [a, b], amount=1000)
    api.error(api.patch_member(project, b, active=False), 409, "balance_not_zero", "Ben owes 500")
    if undo == "delete-the-bill":
        api.delete_bill(project, bill)
    elif undo == "replace-without-the-member":
        api.ok(api.put_bill(project, bill, api.bill_body(a, [a], amount=1000)), 200, "replace the bill without Ben")
    else:
        api.ok(api.patch_member(project, b, weight=3), 200, "Ben's weight to 3 (the old bill keeps its shares)")
        api.bill(project, b, [a], amount=500)
    assert api.balances(project)[b["id"]] == 0, f"setup ({undo}): Ben at 0"
    r = api.patch_member(project, b, active=False)
    assert r.status_code == 200 and r.json().get("active") is False, f"{undo}: Ben's balance is 0, so he may leave: {api.brief(r)}"


# ---------------------------------------------------------------- ids in bodies


def foreign_ids(api, project, ids, kind):
    """An id of ``kind`` that is not an active member of ``project``: another project's member, or a bill id of this project."""
    if kind == "other-project-member":
        theirs = api.project()
        return api.member(theirs, "Them")["id"]
    members = set(ids.values())
    for _ in range(5):  # a bill id that is no member id of the project (ids are the service's own)
        bill = api.bill(project, ids["@a"], [ids["@a"]], amount=1)
        if bill["id"] not in members:
            return bill["id"]
    pytest.fail("setup: every bill id made was also a member id of the project", pytrace=False)


REFERENCES = [pytest.param(verb, field, kind, id=f"{verb}-{field}-{kind}",
                           marks=[pytest.mark.category("security"), pytest.mark.cwe(639)] if kind == "other-project-member" else [pytest.mark.category("validation")])
              for verb in ("POST", "PUT") for field in ("payer_id", "owers") for kind in ("other-project-member", "bill-id")]


@pytest.mark.requirement("R3", "R5")
@pytest.mark.parametrize("verb,field,kind", REFERENCES)
def test_a_body_naming_no_member_of_the_project_is_refused(api, http, db, group, verb, field, kind):
    project, ids = group
    wrong = foreign_ids(api, project, ids, kind)
    body = resolve(BILL, ids)
    body[field] = wrong if field == "payer_id" else [ids["@a"], wrong]
    send = (lambda: api.post_bill(project, body)) if verb == "POST" else (lambda: api.put_bill(project, ids["@bill"], body))
    refused_without_writes(api, db, send, lambda: read_back(api, project), [field], f"{verb} a bill whose {field} names a {kind}")
