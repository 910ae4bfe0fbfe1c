"""Customers, projects and activities (spec.md: Customers, projects, activities; Roles)."""

from __future__ import annotations

import uuid

import pytest

pytestmark = [pytest.mark.tier("base")]


@pytest.mark.requirement("R7", "R8", "R9")
@pytest.mark.category("api_surface")
def test_admin_builds_a_catalogue(api, http, admin):
    name = f"Acme {uuid.uuid4().hex[:8]}"
    customer = api.ok(http.post("/customers", json={"name": name}, headers=admin.headers), 201, "create a customer")
    assert (customer.get("name"), customer.get("active")) == (name, True), f"the customer: {customer}"
    project = api.ok(http.post("/projects", json={"customer_id": customer["id"], "name": "Website"}, headers=admin.headers), 201, "create a project")
    got = {k: project.get(k) for k in ("customer_id", "name", "budget_minutes", "used_minutes", "active")}
    assert got == {"customer_id": customer["id"], "name": "Website", "budget_minutes": None, "used_minutes": 0, "active": True}, f"the project: {got}"
    activity = api.ok(http.post("/activities", json={"project_id": project["id"], "name": "Design"}, headers=admin.headers), 201, "create an activity")
    assert (activity.get("project_id"), activity.get("name"), activity.get("active")) == (project["id"], "Design", True), f"the activity: {activity}"
    for path, item in ((f"/customers/{customer['id']}", customer), (f"/projects/{project['id']}", project), (f"/activities/{activity['id']}", activity)):
        assert api.get(path)["id"] == item["id"], f"GET {path}"


@pytest.mark.requirement("R7")
@pytest.mark.category("validation")
def test_customer_name_validation(api, http, admin):
    problems = [api.validation_problem(http.post("/customers", json=body, headers=admin.headers), ["name"], f"a customer {body}")
                for body in ({}, {"name": ""}, {"name": "   "}, {"name": "x" * 121}, {"name": None}, {"name": 42})]
    customer = api.customer()
    problems.append(api.validation_problem(http.patch(f"/customers/{customer['id']}", json={"name": " \t "}, headers=admin.headers), ["name"], "renaming to blank"))
    api.assert_no_problems(problems, "invalid customer names were not rejected")
    longest = uuid.uuid4().hex + "y" * 88
    r = http.post("/customers", json={"name": longest}, headers=admin.headers)
    assert r.status_code == 201 and r.json().get("name") == longest, f"a name of exactly 120 characters is valid: {api.brief(r)}"


@pytest.mark.requirement("R7")
@pytest.mark.category("state")
def test_customer_names_are_unique_ignoring_case(api, http, admin):
    name = f"Globex {uuid.uuid4().hex[:8]}"
    customer = api.customer(name=name)
    api.error(http.post("/customers", json={"name": name.upper()}, headers=admin.headers), 409, "conflict", "the same name in other case")
    other = api.customer()
    api.error(http.patch(f"/customers/{other['id']}", json={"name": name.lower()}, headers=admin.headers), 409, "conflict", "renaming onto a taken name")
    renamed = api.ok(http.patch(f"/customers/{customer['id']}", json={"name": name.upper()}, headers=admin.headers), 200, "renaming to its own name in another case")
    assert renamed["name"] == name.upper(), f"the rename: {renamed}"


@pytest.mark.requirement("R7")
@pytest.mark.category("api_surface")
def test_customers_are_listed_by_name(api, http):
    tag = uuid.uuid4().hex[:8]
    made = [api.customer(name=f"{tag} {n}") for n in ("delta", "Bravo", "alpha", "Charlie")]
    items = api.get("/customers")["items"]
    mine = [c["name"] for c in items if c["id"] in {m["id"] for m in made}]
    assert mine == sorted(m["name"] for m in made), f"customers ordered by name (case-sensitive): {mine}"


@pytest.mark.requirement("R8")
@pytest.mark.category("validation")
@pytest.mark.parametrize(
    "field, values",
    [("customer_id", [None, "c_nobody", 5]), ("name", ["", "  ", "n" * 121, None]), ("budget_minutes", [0, -5, 10_000_001, 1.5, True, "60"])],
    ids=["customer_id", "name", "budget_minutes"],
)
def test_project_validation(api, http, admin, field, values):
    customer = api.customer()
    problems = []
    for value in values:
        body = {"customer_id": customer["id"], "name": "Proj", field: value}
        problems.append(api.validation_problem(http.post("/projects", json=body, headers=admin.headers), [field], f"a project with {field}={value!r}"))
    api.assert_no_problems(problems, f"invalid {field} values were not rejected")


@pytest.mark.requirement("R8")
@pytest.mark.category("api_surface")
def test_project_changes_and_filters(api, http, admin):
    customer, other = api.customer(), api.customer()
    first = api.project(customer, budget_minutes=600)
    second = api.project(customer)
    api.project(other)
    listed = [p["id"] for p in api.get("/projects", customer_id=customer["id"])["items"]]
    assert listed == [first["id"], second["id"]], f"projects of one customer in creation order: {listed}"
    changed = api.ok(http.patch(f"/projects/{first['id']}", json={"name": "Renamed", "budget_minutes": None, "active": False, "customer_id": other["id"]},
                               headers=admin.headers), 200, "change a project")
    got = {k: changed.get(k) for k in ("name", "budget_minutes", "active", "customer_id")}
    assert got == {"name": "Renamed", "budget_minutes": None, "active": False, "customer_id": customer["id"]}, f"the change (customer_id ignored): {got}"
    assert api.get(f"/projects/{first['id']}")["customer_id"] == customer["id"]


@pytest.mark.requirement("R9")
@pytest.mark.category("validation")
def test_activity_validation_and_filters(api, http, admin):
    project, other = api.project(), api.project()
    problems = [api.validation_problem(http.post("/activities", json=body, headers=admin.headers), fields, f"an activity {body}")
                for body, fields in (({"name": "x"}, ["project_id"]), ({"project_id": "p_nobody", "name": "x"}, ["project_id"]),
                                     ({"project_id": project["id"], "name": " "}, ["name"]), ({"project_id": project["id"]}, ["name"]))]
    api.assert_no_problems(problems, "invalid activities were not rejected")
    a, b = api.activity(project), api.activity(project)
    api.activity(other)
    listed = [x["id"] for x in api.get("/activities", project_id=project["id"])["items"]]
    assert listed == [a["id"], b["id"]], f"activities of one project in creation order: {listed}"
    changed = api.ok(http.patch(f"/activities/{a['id']}", json={"name": "Review", "active": False}, headers=admin.headers), 200, "change an activity")
    assert (changed["name"], changed["active"]) == ("Review", False), f"the change: {changed}"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
@pytest.mark.parametrize("role", ["manager", "employee"])
def test_only_admins_change_the_catalogue(api, http, role):
    caller = api.staff(role)
    work = api.work()
    for method, path, body in (
        ("POST", "/customers", {"name": f"Nope {uuid.uuid4().hex[:8]}"}), ("PATCH", f"/customers/{work.customer['id']}", {"active": False}),
        ("POST", "/projects", {"customer_id": work.customer["id"], "name": "Nope"}), ("PATCH", f"/projects/{work.project['id']}", {"budget_minutes": 1}),
        ("POST", "/activities", {"project_id": work.project["id"], "name": "Nope"}), ("PATCH", f"/activities/{work.activity['id']}", {"active": False}),
    ):
        api.error(http.request(method, path, json=body, headers=caller.headers), 403, "forbidden", f"a {role}: {method} {path}")
    assert api.get(f"/projects/{work.project['id']}")["budget_minutes"] is None, "a refused change changed the project"
    assert api.get(f"/activities/{work.activity['id']}")["active"] is True, "a refused change retired the activity"
    assert [a["id"] for a in api.get("/activities", project_id=work.project["id"])["items"]] == [work.activity["id"]], "a refused create created an activity"


@pytest.mark.requirement("R6")
@pytest.mark.category("authorization")
def test_every_role_reads_the_catalogue(api, http, employee):
    work = api.work()
    for path in ("/customers", f"/customers/{work.customer['id']}", "/projects", f"/projects/{work.project['id']}", "/activities", f"/activities/{work.activity['id']}"):
        r = http.get(path, headers=employee.headers)
        assert r.status_code == 200, f"an employee reading {path}: {api.brief(r)}"


@pytest.mark.requirement("R7", "R8", "R9", "R26")
@pytest.mark.category("api_surface")
def test_unknown_catalogue_ids_get_404(api, http, admin):
    for kind in ("customers", "projects", "activities"):
        api.error(http.get(f"/{kind}/nope-{uuid.uuid4().hex[:6]}", headers=admin.headers), 404, "not_found", f"GET an unknown {kind[:-1]}")
        api.error(http.patch(f"/{kind}/nope-{uuid.uuid4().hex[:6]}", json={"name": "x"}, headers=admin.headers), 404, "not_found", f"PATCH an unknown {kind[:-1]}")


@pytest.mark.requirement("R8")
@pytest.mark.category("side_effects")
def test_used_minutes_follows_the_entries(api, http):
    work = api.work(budget_minutes=1000)
    one, two = api.staff(), api.staff()
    first = api.entry(one, work, duration=90)
    api.entry(two, work, start="09:00", end="09:45")
    assert api.get(f"/projects/{work.project['id']}")["used_minutes"] == 135, "used_minutes sums every user's entries"
    api.ok(http.patch(f"/entries/{first['id']}", json={"duration_minutes": 30}, headers=one.headers), 200, "shorten an entry")
    assert api.get(f"/projects/{work.project['id']}")["used_minutes"] == 75, "a changed entry changes used_minutes"
    api.ok(http.delete(f"/entries/{first['id']}", headers=one.headers), 204, "delete an entry")
    listed = [p for p in api.get("/projects", customer_id=work.customer["id"])["items"]]
    assert listed and listed[0]["used_minutes"] == 45, f"a deleted entry no longer counts (in the list too): {listed}"
