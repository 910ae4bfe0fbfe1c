"""Steps for the events page: setup through the API, actions and checks through the browser.

Titles get a per-scenario suffix, since every scenario runs against the same service and
database: "Pottery class" in a step is "Pottery class <hex>" on the page. Checks on what an
element shows look for the text inside it ("shows the name"), never for the element's whole
text: the spec names what an element shows, not what else it may hold.
"""

import uuid

import requests
from behave import given, then, when
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.expected_conditions import element_to_be_clickable
from selenium.webdriver.support.ui import WebDriverWait

WAIT_S = 10
# the page re-renders its lists after every action: elements found a moment ago may be gone
VOLATILE = (NoSuchElementException, StaleElementReferenceException)


def wait(context, seconds=WAIT_S):
    return WebDriverWait(context.driver, seconds, poll_frequency=0.1, ignored_exceptions=VOLATILE)


def real_title(context, title):
    titles = context.__dict__.setdefault("_titles", {})
    if title not in titles:
        titles[title] = f"{title} {uuid.uuid4().hex[:8]}"
    return titles[title]


def testid(name):
    return (By.CSS_SELECTOR, f"[data-testid='{name}']")


def find(context, name):
    return wait(context).until(lambda d: d.find_element(*testid(name)))


def usable(context, name):
    """What a visitor can type into or press: shown and enabled (a page may hide a form until its data has loaded)."""
    return wait(context).until(element_to_be_clickable(testid(name)))


def text_of(element):
    return (element.text or "").strip()


def event_items(driver):
    return driver.find_elements(*testid("event-item"))


def lookup_event(driver, wanted):
    for item in event_items(driver):
        if wanted in text_of(item.find_element(*testid("event-title"))):
            return item
    return None


def texts(driver, selector):
    """The rendered text of every element matching ``selector``, read in one script call.

    The page re-renders its lists after every action; reading element by element can meet an
    element that is already gone (stale), reading them in one call cannot.
    """
    script = "return Array.from(document.querySelectorAll(arguments[0])).map(e => (e.innerText || e.textContent || '').trim());"
    return list(driver.execute_script(script, selector) or [])


def selected_text(driver):
    return "".join(texts(driver, "[data-testid='selected-event']"))


def event_titles(driver):
    return texts(driver, "[data-testid='event-item'] [data-testid='event-title']")


def event_position(driver, wanted):
    return next((index for index, title in enumerate(event_titles(driver)) if wanted in title), None)


def api(context, method, path, expect_ok=True, **kwargs):
    response = requests.request(method, context.base_url.rstrip("/") + path, timeout=10, **kwargs)
    if expect_ok:
        assert response.status_code < 300, f"setup: {method} {path} answered {response.status_code} {response.text[:200]}"
    return response


def message_text(driver):
    return "".join(texts(driver, "[data-testid='message']"))


def attendees(driver):
    return texts(driver, "[data-testid='attendee-item']")


# ---------------------------------------------------------------- setup through the API


@given('an event "{title}" with {seats:d} seats starting "{starts}" exists')
def event_exists_at(context, title, seats, starts):
    event = api(context, "POST", "/api/events", json={"title": real_title(context, title), "starts_at": starts, "capacity": seats}).json()
    context.__dict__.setdefault("_events", {})[title] = event


@given('an event "{title}" with {seats:d} seats exists')
def event_exists(context, title, seats):
    event_exists_at(context, title, seats, "2032-02-01T10:00:00Z")


@given('"{name}" is registered for "{title}" with email "{email}"')
def someone_registered_as(context, name, title, email):
    event = context._events[title]
    api(context, "POST", f"/api/events/{event['id']}/registrations", json={"name": name, "email": email})


@given('"{name}" is registered for "{title}"')
def someone_registered(context, name, title):
    someone_registered_as(context, name, title, f"{uuid.uuid4().hex[:10]}@example.org")


@given("the events page is open")
def page_open(context):
    context.driver.get(context.base_url.rstrip("/") + "/")
    find(context, "event-list")


# ---------------------------------------------------------------- actions on the page


def type_into(context, name, value):
    field = usable(context, name)
    field.clear()
    field.send_keys(value)


@when('the visitor creates the event "{title}" starting "{starts}" with {seats:d} seats')
def create_event(context, title, starts, seats):
    for name, value in (("new-event-title", real_title(context, title)), ("new-event-starts", starts), ("new-event-capacity", str(seats))):
        type_into(context, name, value)
    usable(context, "create-event").click()


@when('the visitor selects the event "{title}"')
def select_event(context, title):
    wanted = real_title(context, title)
    try:
        wait(context).until(lambda d: lookup_event(d, wanted) or False).click()
    except TimeoutException:
        shown = event_titles(context.driver)
        raise AssertionError(f"the event list does not show {wanted!r}; it shows {shown[-10:]!r}") from None
    try:
        wait(context).until(lambda d: wanted in text_of(d.find_element(*testid("selected-event"))))
    except TimeoutException:
        raise AssertionError(f"after clicking {wanted!r}, selected-event does not show it: {selected_text(context.driver)!r}") from None


@when('the visitor registers as "{name}" with email "{email}"')
def register(context, name, email):
    type_into(context, "attendee-name", name)
    type_into(context, "attendee-email", email)
    usable(context, "register").click()


# ---------------------------------------------------------------- checks on the page


@then('the event list shows "{title}" with "{seats}"')
def list_shows(context, title, seats):
    wanted = real_title(context, title)

    def seats_text(driver):
        script = ("return Array.from(document.querySelectorAll(\"[data-testid='event-item']\")).map(i => ["
                  "(i.querySelector(\"[data-testid='event-title']\") || {}).innerText || '', "
                  "(i.querySelector(\"[data-testid='event-seats']\") || {}).innerText || '']);")
        rows = driver.execute_script(script) or []
        return next((str(seats).strip() for title, seats in rows if wanted in str(title)), None)

    try:
        wait(context).until(lambda d: seats in (seats_text(d) or ""))
    except TimeoutException:
        raise AssertionError(f"expected {seats!r} for {wanted!r}, the page shows {seats_text(context.driver)!r}") from None


@then('the event list shows "{first}" before "{second}"')
def list_order(context, first, second):
    a, b = real_title(context, first), real_title(context, second)
    try:
        wait(context).until(lambda d: event_position(d, a) is not None and event_position(d, b) is not None)
    except TimeoutException:
        raise AssertionError(f"the event list does not show both {a!r} and {b!r}") from None
    pa, pb = event_position(context.driver, a), event_position(context.driver, b)
    assert pa is not None and pb is not None and pa < pb, f"{a!r} starts first and is listed first (API order); positions {pa} and {pb}"


@then('the event list does not show "{title}"')
def list_lacks(context, title):
    wanted = real_title(context, title)
    assert event_position(context.driver, wanted) is None, f"{wanted!r} was refused and must not be listed"
    listed = [e for e in api(context, "GET", "/api/events").json()["items"] if wanted in str(e.get("title"))]
    assert listed == [], f"the refused event was stored: {listed}"


@then('the selected event shows "{title}"')
def selected_shows(context, title):
    wanted = real_title(context, title)
    try:
        wait(context).until(lambda d: wanted in text_of(d.find_element(*testid("selected-event"))))
    except TimeoutException:
        raise AssertionError(f"selected-event does not show {wanted!r}: {selected_text(context.driver)!r}") from None


@then('the attendee list shows "{name}"')
def attendee_shown(context, name):
    try:
        wait(context).until(lambda d: any(name in text for text in attendees(d)))
    except TimeoutException:
        raise AssertionError(f"the attendee list does not show {name!r}: {attendees(context.driver)!r}") from None


@then('"{name}" is not in the attendee list')
def attendee_not_shown(context, name):
    shown = attendees(context.driver)
    assert not any(name in text for text in shown), f"{name!r} should not be registered: {shown!r}"


@then("the page shows an error message")
def error_shown(context):
    try:
        wait(context).until(lambda d: message_text(d) != "")
    except TimeoutException:
        raise AssertionError("the page shows no message after a refused action") from None


@then('the message shows the API\'s message for registering "{name}" with "{email}" for "{title}"')
def api_message_shown(context, name, email, title):
    event = context._events[title]
    # the refused request again, straight to the API: refused again, it changes nothing
    answer = api(context, "POST", f"/api/events/{event['id']}/registrations", expect_ok=False, json={"name": name, "email": email})
    assert answer.status_code >= 400, f"the API accepted the registration the page should have been refused: {answer.status_code} {answer.text[:200]}"
    expected = str(answer.json().get("message", "")).strip()
    assert expected, f"the API's error answer has no message: {answer.text[:200]}"
    try:
        wait(context).until(lambda d: expected in message_text(d))
    except TimeoutException:
        raise AssertionError(f"message should show the API's message {expected!r}, it shows {message_text(context.driver)!r}") from None


@then("the message is empty")
def message_empty(context):
    try:
        wait(context).until(lambda d: message_text(d) == "")
    except TimeoutException:
        raise AssertionError(f"after a successful action the message is empty, it shows {message_text(context.driver)!r}") from None
