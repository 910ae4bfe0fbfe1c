"""Steps for the respondent's page: setup through the API, actions and checks through the browser.

Every scenario registers its own owner and builds its own forms (each with its own slug), so
scenarios share nothing. Checks on what an element shows look for the text inside it, never
for the element's whole text: the spec names what an element shows, not what else it may hold.
"""

import json
import uuid

import requests
from behave import given, then, when
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import element_to_be_clickable
from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 10
# the page may re-render after every action: elements found a moment ago may be gone
VOLATILE = (NoSuchElementException, StaleElementReferenceException)
PASSWORD = "page steps password"


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


def message_text(driver):
    return "".join(texts(driver, "[data-testid='message']"))


def question_titles(driver):
    return texts(driver, "[data-testid='question'] [data-testid='question-title']")


def api(context, method, path, expect_ok=True, owner=True, **kwargs):
    headers = {"Authorization": f"Bearer {context._token}"} if owner else {}
    response = requests.request(method, context.base_url.rstrip("/") + path, timeout=10, headers=headers, **kwargs)
    if expect_ok:
        assert response.status_code < 300, f"setup: {method} {path} answered {response.status_code} {response.text[:200]}"
    return response


def ensure_owner(context):
    if getattr(context, "_token", None):
        return
    email = f"{uuid.uuid4().hex[:12]}@example.org"
    api(context, "POST", "/api/users", owner=False, json={"email": email, "password": PASSWORD})
    context._token = api(context, "POST", "/api/auth/token", owner=False, json={"email": email, "password": PASSWORD}).json()["token"]


def settings_of(text):
    """``min=0,max=5`` or ``options=A;B,max_selections=2`` as the question's settings."""
    settings = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, _, value = part.partition("=")
        if name == "options":
            settings[name] = value.split(";")
        else:
            settings[name] = float(value) if "." in value else int(value)
    return settings


def built(context, title):
    return context.__dict__.setdefault("_forms", {})[title]


# ---------------------------------------------------------------- setup through the API


@given('a form "{title}" with the questions')
def form_with_questions(context, title):
    questions = [{"type": row["type"], "title": row["title"], "required": row["required"] == "yes", **settings_of(row["settings"])} for row in context.table]
    context.__dict__.setdefault("_forms", {})[title] = {"questions": questions}


def create(context, title, response_limit=None):
    ensure_owner(context)
    form = built(context, title)
    made = api(context, "POST", "/api/forms", json={"title": title, "response_limit": response_limit}).json()
    form.update(id=made["id"], slug=made["slug"], qids={})
    for question in form["questions"]:
        form["qids"][question["title"]] = str(api(context, "POST", f"/api/forms/{made['id']}/questions", json=question).json()["id"])
    return form


@given('the form "{title}" is a draft')
def form_draft(context, title):
    create(context, title)


@given('the form "{title}" is published with a response limit of {limit:d}')
def form_published_limited(context, title, limit):
    form = create(context, title, limit)
    api(context, "POST", f"/api/forms/{form['id']}/publish")


@given('the form "{title}" is published')
def form_published(context, title):
    form = create(context, title)
    api(context, "POST", f"/api/forms/{form['id']}/publish")


@given('the form "{title}" is closed')
def form_closed(context, title):
    api(context, "POST", f"/api/forms/{built(context, title)['id']}/close")


def minimal_answers(form):
    """Answers valid for the form: every required question answered with its first valid value."""
    answers = {}
    for question in form["questions"]:
        if not question["required"]:
            continue
        value = {"short_text": "x", "number": question.get("min", 0), "single_choice": (question.get("options") or [""])[0],
                 "multiple_choice": (question.get("options") or [])[: max(1, question.get("min_selections", 1))]}[question["type"]]
        answers[form["qids"][question["title"]]] = value
    return answers


@given('someone has answered the form "{title}"')
def someone_answered(context, title):
    form = built(context, title)
    api(context, "POST", f"/api/public/forms/{form['slug']}/responses", owner=False, json={"answers": minimal_answers(form)})


# ---------------------------------------------------------------- actions on the page


@when('the respondent opens the form "{title}"')
def open_form(context, title):
    form = built(context, title)
    context.driver.get(context.base_url.rstrip("/") + f"/f/{form['slug']}")
    try:
        wait(context).until(lambda d: question_titles(d) or message_text(d))
    except TimeoutException:
        raise AssertionError(f"the page of {title!r} shows neither questions nor a message") from None


def question_element(context, title):
    def lookup(driver):
        for element in driver.find_elements(*testid("question")):
            if title in (element.find_element(*testid("question-title")).text or ""):
                return element
        return False

    try:
        return wait(context).until(lookup)
    except TimeoutException:
        raise AssertionError(f"no question titled {title!r}; the page shows {question_titles(context.driver)!r}") from None


@when('the respondent answers "{question}" with "{value}"')
def answer(context, question, value):
    field = wait(context).until(lambda d: question_element(context, question).find_element(*testid("answer-input")))
    field.clear()
    field.send_keys(value)


@when('the respondent chooses "{option}" for "{question}"')
def choose(context, option, question):
    element = question_element(context, question)
    for candidate in element.find_elements(*testid("option")):
        if option == (candidate.text or "").strip() or option in (candidate.text or ""):
            candidate.click()
            return
    raise AssertionError(f"the question {question!r} has no option {option!r}")


@when("the respondent submits the form")
def submit(context):
    usable(context, "submit").click()


# ---------------------------------------------------------------- checks on the page


@then('the page shows the title "{title}"')
def title_shown(context, title):
    try:
        wait(context).until(lambda d: title in "".join(texts(d, "[data-testid='form-title']")))
    except TimeoutException:
        raise AssertionError(f"form-title does not show {title!r}: {texts(context.driver, '[data-testid=form-title]')!r}") from None


@then("the questions are {titles} in that order")
def questions_in_order(context, titles):
    wanted = [t.strip().strip('"') for t in titles.split('", "')]
    try:
        wait(context).until(lambda d: len(question_titles(d)) >= len(wanted))
    except TimeoutException:
        raise AssertionError(f"expected the questions {wanted!r}, the page shows {question_titles(context.driver)!r}") from None
    shown = question_titles(context.driver)
    assert len(shown) == len(wanted) and all(w in s for w, s in zip(wanted, shown)), f"the questions in position order: expected {wanted!r}, shown {shown!r}"


@then('the question "{question}" offers {options}')
def question_offers(context, question, options):
    wanted = [t.strip().strip('"') for t in options.split('", "')]
    shown = [(o.text or "").strip() for o in question_element(context, question).find_elements(*testid("option"))]
    assert len(shown) == len(wanted) and all(w in s for w, s in zip(wanted, shown)), f"options of {question!r}: expected {wanted!r}, shown {shown!r}"


@then("the page thanks the respondent")
def thanked(context):
    try:
        wait(context).until(lambda d: any(e.is_displayed() for e in d.find_elements(*testid("thank-you"))))
    except TimeoutException:
        raise AssertionError(f"no visible thank-you after the submission; the message shows {message_text(context.driver)!r}") from None


@then("the page does not thank the respondent")
def not_thanked(context):
    shown = [e for e in context.driver.find_elements(*testid("thank-you")) if e.is_displayed()]
    assert not shown, "a refused submission is not thanked"


@then("the page shows an error message")
def error_shown(context):
    try:
        wait(context).until(lambda d: message_text(d) != "")
    except TimeoutException:
        raise AssertionError("the page shows no message after a refused action") from None


@then("the message is empty")
def message_empty(context):
    try:
        wait(context).until(lambda d: message_text(d) == "")
    except TimeoutException:
        raise AssertionError(f"after a successful submission the message is empty, it shows {message_text(context.driver)!r}") from None


@then('the message shows the API\'s message for a submission to "{title}"')
def api_message_shown(context, title):
    form = built(context, title)
    # a valid submission straight to the API: refused for the form's state, it changes nothing
    answer_ = api(context, "POST", f"/api/public/forms/{form['slug']}/responses", expect_ok=False, owner=False, json={"answers": minimal_answers(form)})
    assert answer_.status_code == 409, f"the API should refuse a submission to {title!r} for the form's state: {answer_.status_code} {answer_.text[:200]}"
    expected = str(answer_.json().get("message", "")).strip()
    assert expected, f"the API's error answer has no message: {answer_.text[:200]}"
    try:
        wait(context).until(lambda d: expected in message_text(d))
    except TimeoutException:
        raise AssertionError(f"message should show the API's message {expected!r}, it shows {message_text(context.driver)!r}") from None


def stored(context, title):
    form = built(context, title)
    return api(context, "GET", f"/api/forms/{form['id']}/responses").json()["items"]


@then('the form "{title}" has no responses')
def no_responses(context, title):
    items = stored(context, title)
    assert items == [], f"a refused submission stored a response: {items}"


@then('the form "{title}" has 1 response')
def one_response(context, title):
    try:
        WebDriverWait(context, WAIT_S, poll_frequency=0.2).until(lambda _: len(stored(context, title)) == 1)
    except TimeoutException:
        raise AssertionError(f"expected one response, the API lists {stored(context, title)!r}") from None


@then('the form "{title}" has 1 response with "{q1}" "{v1}", "{q2}" {v2:d}, "{q3}" "{v3}" and "{q4}" "{v4}"')
def one_response_with(context, title, q1, v1, q2, v2, q3, v3, q4, v4):
    one_response(context, title)
    qids = built(context, title)["qids"]
    answers = stored(context, title)[0].get("answers") or {}
    got = {q: answers.get(qids[q]) for q in (q1, q2, q3, q4)}
    assert got[q1] == v1 and got[q2] == v2 and got[q3] == v3, f"the answers typed and chosen on the page: {got}"
    assert isinstance(got[q4], list) and sorted(got[q4]) == sorted(v4.split(";")), f"both choices of {q4!r}: {got[q4]!r}"


@then('the form "{title}" has 1 response answering "{question}" with the number {number}')
def one_response_with_number(context, title, question, number):
    """The stored answer of a number question is the JSON number typed, not a string or a rounded value."""
    one_response(context, title)
    expected = json.loads(number)
    got = (stored(context, title)[0].get("answers") or {}).get(built(context, title)["qids"][question])
    assert type(got) in (int, float) and got == expected, f"{question!r} typed as {number!r} should be stored as the number {expected!r}, the API answers {got!r}"


@then("the page shows no questions")
def no_questions(context):
    shown = question_titles(context.driver)
    assert shown == [], f"a draft's questions are shown: {shown!r}"


@then("the page holds no element the text would make")
def no_injected_elements(context):
    selector = ("[data-testid='form-title'] b, [data-testid='question'] img, [data-testid='question'] i, "
                "[data-testid='question'] script, [data-testid='option'] script")
    made = context.driver.execute_script("return document.querySelectorAll(arguments[0]).length;", selector)
    assert made == 0, f"titles or options were inserted as HTML ({made} elements made from them): stored XSS"
