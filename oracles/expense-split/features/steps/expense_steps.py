"""Steps for the expense-split page: setup through the API, actions and checks through the browser.

Project names get a per-scenario suffix and every scenario makes its own project (fresh slug and
password), since every scenario runs against the same service and database. Checks on what an
element shows look for the text inside it, never for the element's whole text: the spec names
what an element shows, not what else it may hold. Amounts are compared as whole amount tokens
("3.33" is not found inside "13.33" or "-3.33").
"""

import re
import uuid

import requests
from behave import given, then, when
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import element_to_be_clickable
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT_S = 10
# the page re-renders its lists after every action: elements found a moment ago may be gone
VOLATILE = (NoSuchElementException, StaleElementReferenceException)
AMOUNT = re.compile(r"(?<![\d.\-])-?\d+\.\d{2}(?![\d])")


def wait(context, seconds=WAIT_S):
    return WebDriverWait(context.driver, seconds, poll_frequency=0.1, ignored_exceptions=VOLATILE)


def testid(name):
    return (By.CSS_SELECTOR, f"[data-testid='{name}']")


def find(context, name):
    return wait(context).until(lambda d: d.find_element(*testid(name)))


def usable(context, name):
    """What a visitor can type into or press: shown and enabled (a page may hide a form until its data has loaded)."""
    return wait(context).until(element_to_be_clickable(testid(name)))


def texts(driver, selector):
    """The rendered text of every element matching ``selector``, read in one script call (no stale elements)."""
    script = "return Array.from(document.querySelectorAll(arguments[0])).map(e => (e.innerText || e.textContent || '').trim());"
    return list(driver.execute_script(script, selector) or [])


def rows(driver, item, parts):
    """For every ``item`` element, the texts of its ``parts`` children (one script call)."""
    script = ("return Array.from(document.querySelectorAll(\"[data-testid='\" + arguments[0] + \"']\")).map(i => arguments[1].map(p => "
              "{const e = i.querySelector(\"[data-testid='\" + p + \"']\"); return e ? (e.innerText || e.textContent || '').trim() : '';}));")
    return [list(r) for r in (driver.execute_script(script, item, parts) or [])]


def amounts(text):
    return AMOUNT.findall(text.replace("\u2212", "-"))


def cents_of(text):
    units, _, fraction = text.partition(".")
    return int(units) * 100 + int(fraction or "0")


def api(context, method, path, expect_ok=True, token=True, **kwargs):
    headers = {"Authorization": f"Bearer {context._project['token']}"} if token and getattr(context, "_project", None) else {}
    response = requests.request(method, context.base_url.rstrip("/") + path, timeout=10, headers=headers, **kwargs)
    if expect_ok:
        assert response.status_code < 300, f"setup: {method} {path} answered {response.status_code} {response.text[:200]}"
    return response


def project_path(context, rest=""):
    return f"/api/projects/{context._project['slug']}{rest}"


def member_id(context, name):
    assert name in context._members, f"the scenario has no member {name!r}: {sorted(context._members)}"
    return context._members[name]


def names(listed):
    return [n.strip() for n in listed.split(",") if n.strip()]


def message_text(driver):
    return "".join(texts(driver, "[data-testid='message']"))


# ---------------------------------------------------------------- setup through the API


@given('a project "{name}" with members "{members}"')
def project_exists(context, name, members):
    real = f"{name} {uuid.uuid4().hex[:8]}"
    slug, password = f"ui-{uuid.uuid4().hex[:14]}", "pw-" + uuid.uuid4().hex
    context._project = {"slug": slug, "password": password, "name": real, "label": name, "token": None}
    api(context, "POST", "/api/projects", token=False, json={"slug": slug, "name": real, "password": password})
    context._project["token"] = api(context, "POST", f"/api/projects/{slug}/token", token=False, json={"password": password}).json()["token"]
    context._members = {}
    for entry in names(members):
        member, _, weight = entry.partition(":")
        body = {"name": member} if not weight else {"name": member, "weight": int(weight)}
        context._members[member] = api(context, "POST", project_path(context, "/members"), json=body).json()["id"]


@given('"{payer}" paid "{amount}" for "{owers}" described "{description}"')
def bill_exists(context, payer, amount, owers, description):
    body = {"payer_id": member_id(context, payer), "amount_cents": cents_of(amount), "date": "2030-03-03",
            "description": description, "owers": [member_id(context, o) for o in names(owers)]}
    api(context, "POST", project_path(context, "/bills"), json=body)


@given("the page is open")
def page_open(context):
    context.driver.get(context.base_url.rstrip("/") + "/")
    find(context, "login-slug")


# ---------------------------------------------------------------- actions on the page


def type_into(context, name, value):
    field = usable(context, name)
    field.clear()
    field.send_keys(value)


def log_in(context, password):
    type_into(context, "login-slug", context._project["slug"])
    type_into(context, "login-password", password)
    usable(context, "login").click()
    context._request = ("POST", project_path(context, "/token"), {"password": password}, False)


@when("the visitor opens the project with its password")
def open_project(context):
    log_in(context, context._project["password"])
    wanted = context._project["name"]
    try:
        wait(context).until(lambda d: wanted in "".join(texts(d, "[data-testid='project-name']")))
    except TimeoutException:
        raise AssertionError(f"after logging in, project-name does not show {wanted!r}; message: {message_text(context.driver)!r}") from None


@when('the visitor opens the project with the password "{password}"')
def open_project_wrongly(context, password):
    log_in(context, password)


@when('the visitor adds the member "{name}"')
def add_member(context, name):
    type_into(context, "new-member-name", name)
    usable(context, "new-member-weight").clear()
    usable(context, "add-member").click()
    context._request = ("POST", project_path(context, "/members"), {"name": name}, True)


def ower_boxes_ready(driver, wanted):
    values = driver.execute_script("return Array.from(document.querySelectorAll(\"[data-testid='new-bill-ower']\")).map(e => e.value);") or []
    return all(str(w) in values for w in wanted)


@when('the visitor adds a bill of "{amount}" paid by "{payer}" for "{owers}" dated "{date}" described "{description}"')
def add_bill(context, amount, payer, owers, date, description):
    payer_id, ower_ids = member_id(context, payer), [member_id(context, o) for o in names(owers)]
    try:
        wait(context).until(lambda d: ower_boxes_ready(d, [payer_id, *ower_ids]))
    except TimeoutException:
        raise AssertionError("the bill form does not offer every active member as an ower (new-bill-ower values)") from None
    Select(usable(context, "new-bill-payer")).select_by_value(str(payer_id))
    for box in context.driver.find_elements(*testid("new-bill-ower")):
        if (box.get_attribute("value") in {str(i) for i in ower_ids}) != box.is_selected():
            box.click()
    type_into(context, "new-bill-amount", amount)
    type_into(context, "new-bill-date", date)
    type_into(context, "new-bill-description", description)
    usable(context, "add-bill").click()
    body = {"payer_id": payer_id, "amount_cents": cents_of(amount), "date": date, "description": description, "owers": ower_ids}
    context._request = ("POST", project_path(context, "/bills"), body, True)


@when('the visitor adds a bill of "{amount}" paid by "{payer}" for nobody dated "{date}" described "{description}"')
def add_bill_without_owers(context, amount, payer, date, description):
    add_bill(context, amount, payer, "", date, description)


@when('the visitor deletes the bill "{description}"')
def delete_bill(context, description):
    script = ("return Array.from(document.querySelectorAll(\"[data-testid='bill-item']\")).find(i => { const d = i.querySelector("
              "\"[data-testid='bill-description']\"); return d && (d.innerText || d.textContent || '').includes(arguments[0]); }) || null;")
    try:
        item = wait(context).until(lambda d: d.execute_script(script, description))
        item.find_element(*testid("delete-bill")).click()
    except TimeoutException:
        raise AssertionError(f"the bill list does not show {description!r} with a delete-bill button") from None


# ---------------------------------------------------------------- checks on the page


def until(context, check, failure):
    try:
        wait(context).until(lambda d: check(d))
    except TimeoutException:
        raise AssertionError(failure()) from None


@then('the project name shows "{name}"')
def project_name_shown(context, name):
    wanted = context._project["name"]
    assert wanted.startswith(name)
    until(context, lambda d: wanted in "".join(texts(d, "[data-testid='project-name']")),
          lambda: f"project-name should show {wanted!r}: {texts(context.driver, '[data-testid=project-name]')!r}")


@then('the project name does not show "{name}"')
def project_name_hidden(context, name):
    shown = "".join(texts(context.driver, "[data-testid='project-name']"))
    assert context._project["name"] not in shown, f"a refused login opens nothing, project-name shows {shown!r}"


def member_texts(driver):
    return texts(driver, "[data-testid='member-item']")


@then('the member list shows "{name}"')
def member_shown(context, name):
    until(context, lambda d: any(name in t for t in member_texts(d)), lambda: f"the member list does not show {name!r}: {member_texts(context.driver)!r}")


@then('the member list shows "{name}" once')
def member_shown_once(context, name):
    member_shown(context, name)
    shown = [t for t in member_texts(context.driver) if name in t]
    assert len(shown) == 1, f"{name!r} is one member: {member_texts(context.driver)!r}"


@then('"{name}" is not in the member list')
def member_not_shown(context, name):
    shown = member_texts(context.driver)
    assert not any(name in t for t in shown), f"{name!r} should not be shown: {shown!r}"


def balance_of(driver, name):
    return next((amount for who, amount in rows(driver, "balance-item", ["balance-name", "balance-amount"]) if name in who), None)


@then('the balance of "{name}" shows "{amount}"')
def balance_shown(context, name, amount):
    until(context, lambda d: amount in amounts(balance_of(d, name) or ""),
          lambda: f"the balance of {name!r} should show {amount!r}, the page shows {balance_of(context.driver, name)!r}")


def bill_rows(driver):
    return rows(driver, "bill-item", ["bill-description", "bill-amount"])


@then('the bill list shows "{description}" with "{amount}"')
def bill_shown(context, description, amount):
    until(context, lambda d: any(description in text and amount in amounts(value) for text, value in bill_rows(d)),
          lambda: f"the bill list should show {description!r} with {amount!r}: {bill_rows(context.driver)!r}")


@then('the bill "{description}" is recorded with {cents:d} cents')
def bill_recorded(context, description, cents):
    """The amount the API holds for the bill the page added: what the typed amount became, in cents."""
    def recorded():
        bills = api(context, "GET", project_path(context, "/bills")).json()["items"]
        return [b.get("amount_cents") for b in bills if description in str(b.get("description"))]

    until(context, lambda _: recorded(), lambda: f"the API lists no bill described {description!r}")
    recorded_cents = recorded()
    assert len(recorded_cents) == 1 and type(recorded_cents[0]) is int and recorded_cents[0] == cents, \
        f"the bill {description!r} should be recorded with amount_cents {cents}, the API answers {recorded_cents!r}"


@then('the bill list does not show "{description}"')
def bill_not_shown(context, description):
    until(context, lambda d: not any(description in text for text, _ in bill_rows(d)),
          lambda: f"the bill list should not show {description!r}: {bill_rows(context.driver)!r}")
    stored = [b for b in api(context, "GET", project_path(context, "/bills")).json()["items"] if description in str(b.get("description"))]
    assert stored == [], f"the bill should not be stored: {stored}"


def plan_rows(driver):
    return rows(driver, "settlement-item", ["settlement-from", "settlement-to", "settlement-amount"])


def plan_matches(shown, expected):
    if len(shown) != len(expected):
        return False
    return all(f in sf and t in st and a in amounts(sa) for (sf, st, sa), (f, t, a) in zip(shown, expected))


@then('the settlement plan is "{plan}"')
def plan_shown(context, plan):
    expected = []
    for part in plan.split(";"):
        match = re.fullmatch(r"\s*(.+?) pays (.+?) (-?\d+\.\d{2})\s*", part)
        assert match, f"step text: cannot read the transfer {part!r}"
        expected.append(match.groups())
    until(context, lambda d: plan_matches(plan_rows(d), expected),
          lambda: f"the settlement list should show {expected!r} in that order, it shows {plan_rows(context.driver)!r}")


@then("the settlement plan is empty")
def plan_empty(context):
    until(context, lambda d: plan_rows(d) == [], lambda: f"a settled project has no transfers, the page shows {plan_rows(context.driver)!r}")


@then("the message shows the API's message for that request")
def api_message_shown(context):
    method, path, body, with_token = context._request
    # the refused request again, straight to the API: refused again, it changes nothing
    answer = api(context, method, path, expect_ok=False, token=with_token, json=body)
    assert answer.status_code >= 400, f"the API accepted the request the page should have been refused: {answer.status_code} {answer.text[:200]}"
    expected = str(answer.json().get("message", "")).strip()
    assert expected, f"the API's error answer has no message: {answer.text[:200]}"
    until(context, lambda d: expected in message_text(d),
          lambda: f"message should show the API's message {expected!r}, it shows {message_text(context.driver)!r}")


@then("the message is empty")
def message_empty(context):
    until(context, lambda d: message_text(d) == "", lambda: f"after a successful action the message is empty, it shows {message_text(context.driver)!r}")
