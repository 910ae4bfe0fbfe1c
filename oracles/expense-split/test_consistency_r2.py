"""R2 (evolved) items: long random sequences against the spec's model, concurrency, restarts.

spec.md: "Requests may arrive concurrently." and "The service may be restarted at any time and
must then answer with the same data (tokens aside, see Access)."
"""

from __future__ import annotations

import random

import pytest
import requests

pytestmark = [pytest.mark.tier("r2")]


def parallel(base_url, calls, timeout_s):
    """Send every (method, path, headers, body) at once, each on its own connection; fail on a lost request."""
    from pytest_backendbench.http.checks import concurrently

    def send(call):
        method, path, headers, body = call
        try:
            with requests.Session() as session:
                session.trust_env = False
                return session.request(method, base_url + path, json=body, headers=headers, timeout=timeout_s)
        except requests.RequestException as err:
            return f"{method} {path} got no answer within {timeout_s:.0f} s ({type(err).__name__})"

    results = concurrently(send, calls, timeout_s)
    lost = [r for r in results if isinstance(r, str)]
    if lost:
        pytest.fail(f"{len(lost)} of {len(calls)} concurrent requests were lost:\n" + "\n".join(lost[:5]), pytrace=False)
    return results


@pytest.mark.requirement("R5", "R6", "R7", "R8")
@pytest.mark.category("workflow")
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_random_bills_match_the_model(api, http, checks, seed):
    rng = random.Random(seed)
    project = api.project()
    weights = {}
    for index in range(rng.randint(3, 6)):
        member = api.member(project, f"R{index}", weight=rng.randint(1, 5))
        weights[member["id"]] = member["weight"]
    ids = sorted(weights)
    bills = {}  # bill id -> (payer, shares)
    for step in range(14):
        if bills and rng.random() < 0.25:
            victim = rng.choice(sorted(bills))
            api.delete_bill(project, {"id": victim})
            del bills[victim]
            continue
        payer, owers, amount = rng.choice(ids), rng.sample(ids, rng.randint(1, len(ids))), rng.randint(1, 50_000)
        if bills and rng.random() < 0.25:
            target = rng.choice(sorted(bills))
            got = api.ok(api.put_bill(project, target, api.bill_body(payer, owers, amount=amount)), 200, f"step {step}: replace")
            bills[target] = (payer, amount, checks.model_shares(amount, {o: weights[o] for o in owers}))
        else:
            got = api.bill(project, payer, owers, amount=amount)
            bills[got["id"]] = (payer, amount, checks.model_shares(amount, {o: weights[o] for o in owers}))
        expected = [{"member_id": m, "share_cents": s} for m, s in sorted(bills[got["id"]][2].items())]
        assert got["shares"] == expected, f"seed {seed} step {step}: shares {got['shares']} != {expected}"
    model = {m: 0 for m in ids}
    for payer, amount, shares in bills.values():
        model[payer] += amount
        for member, share in shares.items():
            model[member] -= share
    assert api.balances(project) == model, f"seed {seed}: balances after the sequence"
    assert api.settlements(project) == checks.model_settlements(model), f"seed {seed}: the settlement plan"


@pytest.mark.requirement("R5", "R7")
@pytest.mark.category("state")
def test_concurrent_bills_all_count(api, http, service):
    project = api.project()
    a, b, c = (api.member(project) for _ in range(3))
    calls = [("POST", project.path("/bills"), project.auth, api.bill_body(a if i % 2 else b, [a, b, c], amount=300 + i)) for i in range(12)]
    answers = parallel(service.base_url, calls, http.timeout_s)
    assert sorted(r.status_code for r in answers) == [201] * 12, [r.status_code for r in answers]
    assert len(api.bills(project)) == 12
    balances = api.balances(project)
    owed_by_a = sum(s["share_cents"] for r in answers for s in r.json()["shares"] if s["member_id"] == a["id"])
    assert sum(balances.values()) == 0 and balances[a["id"]] == sum(300 + i for i in range(12) if i % 2) - owed_by_a


@pytest.mark.requirement("R4")
@pytest.mark.category("state")
def test_concurrent_members_with_one_name_make_one_member(api, http, service):
    project = api.project()
    calls = [("POST", project.path("/members"), project.auth, {"name": "Same"}) for _ in range(8)]
    answers = parallel(service.base_url, calls, http.timeout_s)
    assert sorted(r.status_code for r in answers) == [201] + [409] * 7, [r.status_code for r in answers]
    assert [m["name"] for m in api.members(project)] == ["Same"]


@pytest.mark.requirement("R2")
@pytest.mark.category("state")
def test_concurrent_projects_with_one_slug_make_one_project(api, http, service):
    slug = api.fresh_slug("race")
    calls = [("POST", "/api/projects", {}, {"slug": slug, "name": f"Racer {i}", "password": f"password-{i:04d}"}) for i in range(6)]
    answers = parallel(service.base_url, calls, http.timeout_s)
    assert sorted(r.status_code for r in answers) == [201] + [409] * 5, [r.status_code for r in answers]
    winner = next(i for i, r in enumerate(answers) if r.status_code == 201)
    assert api.post_token(slug, f"password-{winner:04d}").status_code == 200, "the winner's password opens the project"


@pytest.mark.requirement("R9", "R3")
@pytest.mark.category("state")
@pytest.mark.slow
def test_everything_survives_a_restart(api, http, service, checks):
    project = api.project()
    a, b = api.member(project, "Stay", weight=2), api.member(project, "Put")
    api.ok(api.patch_member(project, b, active=False), 200, "deactivate Put")
    api.ok(api.patch_member(project, b, active=True), 200, "reactivate Put")
    bill = api.bill(project, a, [a, b], amount=1001, date="2030-10-10", description="Kept")
    before = (api.members(project), api.bills(project), api.balances(project), api.settlements(project))
    checks.restart(service, http)
    project.token = api.token(project.slug, project.password)  # tokens may not survive a restart
    after = (api.members(project), api.bills(project), api.balances(project), api.settlements(project))
    assert [api.doc(m, ("id", "name", "weight", "active")) for m in after[0]] == [api.doc(m, ("id", "name", "weight", "active")) for m in before[0]]
    keys = ("id", "payer_id", "amount_cents", "date", "description", "owers", "shares")
    assert [api.doc(x, keys) for x in after[1]] == [api.doc(x, keys) for x in before[1]], "the bills survive"
    assert after[2:] == before[2:], "balances and plan survive"
    assert api.get_bill(project, bill)["description"] == "Kept"
