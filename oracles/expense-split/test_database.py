"""What the service keeps in PostgreSQL, for data this item made itself (spec.md: Database)."""

from __future__ import annotations

import datetime as dt

import pytest

pytestmark = [pytest.mark.tier("base"), pytest.mark.category("state")]


@pytest.mark.requirement("R2", "R9")
def test_a_project_is_a_row(api, http, db):
    project = api.project(name="Flat 3B")
    rows = db.query("SELECT slug, name FROM projects WHERE slug = %s", (project.slug,))
    assert [(r["slug"], r["name"]) for r in rows] == [(project.slug, "Flat 3B")], f"one projects row: {rows}"


@pytest.mark.requirement("R4", "R9")
def test_members_are_rows_of_their_project(api, http, db):
    project = api.project()
    a = api.member(project, "Ana", weight=3)
    b = api.member(project, "Bea")
    api.ok(api.patch_member(project, b, active=False), 200, "deactivate Bea")
    rows = db.query("SELECT id, name, weight, active FROM members WHERE project_slug = %s ORDER BY id", (project.slug,))
    assert [(r["id"], r["name"], r["weight"], r["active"]) for r in rows] == sorted([(a["id"], "Ana", 3, True), (b["id"], "Bea", 1, False)]), rows


@pytest.mark.requirement("R5", "R6", "R9")
def test_a_bill_is_a_row_with_one_ower_row_per_share(api, http, db, checks):
    project = api.project()
    a, b, c = (api.member(project, n, weight=w) for n, w in (("Cal", 1), ("Dee", 2), ("Eli", 1)))
    bill = api.bill(project, a, [a, b, c], amount=1001, date="2030-06-30", description="Boat")
    rows = db.query("SELECT project_slug, payer_id, amount_cents, date, description FROM bills WHERE id = %s", (bill["id"],))
    assert [(r["project_slug"], r["payer_id"], r["amount_cents"], r["date"], r["description"]) for r in rows] == [
        (project.slug, a["id"], 1001, dt.date(2030, 6, 30), "Boat")], rows
    owers = db.query("SELECT member_id, share_cents FROM bill_owers WHERE bill_id = %s ORDER BY member_id", (bill["id"],))
    # 250 + 500 + 250 and the odd cent to the lowest member id (ids are the service's, whatever their order)
    assert [(r["member_id"], r["share_cents"]) for r in owers] == sorted(checks.model_shares(1001, {a["id"]: 1, b["id"]: 2, c["id"]: 1}).items()), owers


@pytest.mark.requirement("R5", "R9")
@pytest.mark.db_effect("DELETE", table="bill_owers")
def test_a_replaced_bill_has_only_its_new_ower_rows(api, http, db):
    project = api.project()
    a, b, c = (api.member(project, n) for n in ("Fi", "Gil", "Hu"))
    bill = api.bill(project, a, [a, b], amount=400)
    api.ok(api.put_bill(project, bill, api.bill_body(a, [b, c], amount=600)), 200, "replace the bill")
    owers = db.query("SELECT member_id, share_cents FROM bill_owers WHERE bill_id = %s ORDER BY member_id", (bill["id"],))
    assert [(r["member_id"], r["share_cents"]) for r in owers] == sorted([(b["id"], 300), (c["id"], 300)]), f"one row per new ower: {owers}"
    assert db.scalar("SELECT amount_cents FROM bills WHERE id = %s", (bill["id"],)) == 600


@pytest.mark.requirement("R5", "R9")
def test_a_deleted_bill_leaves_no_rows(api, http, db):
    project, a, b = api.pair()
    kept, gone = api.bill(project, a, [a, b]), api.bill(project, b, [a, b])
    api.delete_bill(project, gone)
    assert db.scalar("SELECT count(*) FROM bills WHERE id = %s", (gone["id"],)) == 0, "the bill row is deleted"
    assert db.scalar("SELECT count(*) FROM bill_owers WHERE bill_id = %s", (gone["id"],)) == 0, "its bill_owers rows too"
    assert db.scalar("SELECT count(*) FROM bill_owers WHERE bill_id = %s", (kept["id"],)) == 2, "the other bill keeps its rows"


@pytest.mark.requirement("R7", "R9")
def test_balances_are_what_the_rows_say(api, http, db):
    project = api.project()
    members = [api.member(project, f"R{i}", weight=i + 1) for i in range(3)]
    api.bill(project, members[0], members, amount=1000)
    api.bill(project, members[2], members[:2], amount=777)
    for member_id, balance in api.balances(project).items():
        paid = db.scalar("SELECT COALESCE(sum(amount_cents), 0) FROM bills WHERE payer_id = %s", (member_id,))
        owed = db.scalar("SELECT COALESCE(sum(share_cents), 0) FROM bill_owers WHERE member_id = %s", (member_id,))
        assert balance == int(paid) - int(owed), f"member {member_id}: balance {balance}, rows say {paid} - {owed}"


@pytest.mark.requirement("R4", "R9")
def test_a_refused_member_writes_no_row(api, http, db):
    project = api.project()
    api.member(project, "Ike")
    api.error(api.post_member(project, name="Ike"), 409, "member_exists", "the same name again")
    assert db.scalar("SELECT count(*) FROM members WHERE project_slug = %s", (project.slug,)) == 1
