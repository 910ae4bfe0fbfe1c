"""Shared setup for the notifications oracle: users with addresses, preferences, templates, the delivery mock.

Every item builds its own world (unique usernames, unique email addresses and phone numbers,
templates with unique keys), so items never depend on each other or on what the shared service
and the shared delivery mock already hold. What the service sent to the provider is filtered by
the notification id it must carry as ``reference`` or by the item's own recipient address.

Quiet hours depend on the current UTC time: ``quiet(start_offset, end_offset)`` builds a window
relative to now in minutes, with margins of an hour wherever a minute's drift could matter.
The administrator's token is the one the task promises the service (task.yaml, env).
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import requests

from pytest_backendbench.http.accounts import AccountsApi, Bearer, admin_fixture, api_fixture, leak_checks_fixture
from pytest_backendbench.http.api import unique

DEFAULT_PREFERENCES = {"email_enabled": True, "sms_enabled": True, "opted_out": [], "quiet_hours": None}


def fresh_email(domain: str = "mail.example.com") -> str:
    """A fresh email address in ``domain`` (bounce.example, flaky.example, down.example misbehave)."""
    return f"u{uuid.uuid4().hex[:12]}@{domain}"


def fresh_phone(prefix: str = "+1") -> str:
    """A fresh E.164 number starting with ``prefix`` (+999 rejected, +998 flaky, +997 down)."""
    return prefix + "".join(random.choice("0123456789") for _ in range(12 - len(prefix))) + "7"


def clock(offset_minutes: int = 0) -> str:
    """The UTC time of day ``offset_minutes`` from now, HH:MM."""
    return (datetime.now(timezone.utc) + timedelta(minutes=offset_minutes)).strftime("%H:%M")


def steady_minute(margin_s: float = 8.0) -> None:
    """Wait out the end of the current minute when fewer than ``margin_s`` seconds are left.

    Items that put a quiet-hours edge at the current minute must not see the minute change
    between setting the preferences and sending (nor meet a service clock a little behind).
    """
    import time

    left = 60 - datetime.now(timezone.utc).second - datetime.now(timezone.utc).microsecond / 1e6
    if left < margin_s:
        time.sleep(left + 1.5)


def quiet(start_offset: int, end_offset: int) -> dict[str, str]:
    """Quiet hours from now+start_offset to now+end_offset minutes (times of day, so they may wrap)."""
    return {"start": clock(start_offset), "end": clock(end_offset)}


def quiet_wrapping_now() -> dict[str, str]:
    """Quiet hours that wrap over midnight (start later than end) and hold the current time, an hour from either edge."""
    if datetime.now(timezone.utc).hour >= 12:
        return {"start": clock(-60), "end": "06:00"}
    return {"start": "18:00", "end": clock(60)}


@dataclass
class Caller(Bearer):
    """Someone who sends requests: a logged-in user, or the administrator."""

    id: str
    username: str
    password: str
    token: str
    email: str | None = None
    phone: str | None = None


class Delivery:
    """The delivery mock, seen from the oracle: what the service sent it."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def attempts_for(self, notification_id: str) -> list[dict[str, Any]]:
        """Every POST /messages the service sent carrying this notification as reference, oldest first."""
        return [
            e for e in self.handle.requests()
            if e.get("method") == "POST" and e.get("path") == "/messages"
            and isinstance(e.get("json"), dict) and e["json"].get("reference") == notification_id
        ]

    def to(self, address: str) -> list[dict[str, Any]]:
        """Every POST /messages the service sent to this address, oldest first."""
        return [
            e for e in self.handle.requests()
            if e.get("method") == "POST" and e.get("path") == "/messages" and isinstance(e.get("json"), dict) and e["json"].get("to") == address
        ]

    def message(self, message_id: str) -> dict[str, Any] | None:
        """The provider's record of an accepted message."""
        response = requests.get(f"{self.handle.base_url}/messages/{message_id}", timeout=10)
        return dict(response.json()) if response.status_code == 200 else None


class Api(AccountsApi):
    """Setup and inspection helpers on top of the ``http`` fixture."""

    admin_token_key = "NOTIFY_ADMIN_TOKEN"

    email = staticmethod(fresh_email)
    phone = staticmethod(fresh_phone)
    quiet = staticmethod(quiet)
    quiet_wrapping_now = staticmethod(quiet_wrapping_now)
    clock = staticmethod(clock)
    steady_minute = staticmethod(steady_minute)

    # ---------------------------------------------------------------- users and preferences

    def user(self, prefix: str = "user", *, email: str | None | bool = True, phone: str | None | bool = True) -> Caller:
        """A registered user with a token; ``True`` gives a fresh ordinary address, ``None``/``False`` none."""
        address = fresh_email() if email is True else (email or None)
        number = fresh_phone() if phone is True else (phone or None)
        password = "pw-" + uuid.uuid4().hex
        body = {"username": unique(prefix), "password": password, "email": address, "phone": number}
        created = self.ok(self.http.post("/users", json=body), 201, "register a user")
        token = self.ok(self.http.post("/auth/token", json={"username": created["username"], "password": password}), 200, "log in")["token"]
        return Caller(created["id"], created["username"], password, str(token), address, number)

    def preferences(self, user: Caller, **changes: Any) -> dict[str, Any]:
        """Replace the user's preferences with the defaults plus ``changes``; must succeed."""
        response = self.http.put("/me/preferences", json={**DEFAULT_PREFERENCES, **changes}, headers=user.headers)
        return self.ok(response, 200, f"set preferences {changes}")

    def preferring(self, **changes: Any) -> Caller:
        """A fresh user whose preferences are the defaults plus ``changes``."""
        user = self.user()
        self.preferences(user, **changes)
        return user

    def in_quiet_hours(self) -> Caller:
        """A fresh user whose quiet hours are now (from an hour ago to an hour ahead)."""
        return self.preferring(quiet_hours=self.quiet(-60, 60))

    def set_addresses(self, user: Caller, **addresses: Any) -> dict[str, Any]:
        """PATCH /me; must succeed."""
        return self.ok(self.http.patch("/me", json=addresses, headers=user.headers), 200, f"set addresses {addresses}")

    # ---------------------------------------------------------------- templates and notifications

    def template(self, channel: str = "email", category: str = "reminders", subject: str | None = "Hello {{username}}",
                 body: str = "Hi {{username}}, this is a reminder.", **extra: Any) -> dict[str, Any]:
        """A new template with a unique key."""
        payload = {"key": f"tpl.{uuid.uuid4().hex[:16]}", "channel": channel, "category": category, "body": body, **extra}
        if channel == "email":
            payload["subject"] = subject
        return self.ok(self.http.post("/templates", json=payload, headers=self.admin.headers), 201, "create a template")

    def try_send(self, user: Caller | str, template: dict[str, Any] | str, data: Any = None, headers: dict[str, str] | None = None) -> requests.Response:
        """Attempt POST /notifications; the response, whatever it is."""
        body: dict[str, Any] = {
            "user_id": user if isinstance(user, str) else user.id,
            "template_key": template if isinstance(template, str) else template["key"],
        }
        if data is not None:
            body["data"] = data
        return self.http.post("/notifications", json=body, headers=headers or self.admin.headers)

    def send(self, user: Caller, template: dict[str, Any], data: dict[str, str] | None = None) -> dict[str, Any]:
        """Send a notification; the request must succeed (201), whatever the notification's status."""
        return self.ok(self.try_send(user, template, data), 201, "send a notification")

    def sent_from(self, **template_fields: Any) -> tuple[Caller, dict[str, Any], dict[str, Any]]:
        """A fresh user, a new template (``template``'s arguments) and a notification of it to the user: (user, template, notification)."""
        user = self.user()
        template = self.template(**template_fields)
        return user, template, self.send(user, template)

    def notified(self, prefix: str = "user", **addresses: Any) -> tuple[Caller, dict[str, Any]]:
        """A new user (``user``'s arguments) sent a notification from a new default template; both."""
        user = self.user(prefix, **addresses)
        return user, self.send(user, self.template())

    def notification(self, caller: Caller, notification: dict[str, Any]) -> dict[str, Any]:
        """Read one notification (must be visible)."""
        return self.ok(self.http.get(f"/notifications/{notification['id']}", headers=caller.headers), 200, "read a notification")

    def retry(self, notification: dict[str, Any]) -> dict[str, Any]:
        """The administrator retries a notification; must succeed."""
        return self.ok(self.http.post(f"/notifications/{notification['id']}/retry", headers=self.admin.headers), 200, "retry")

    def dispatch(self) -> dict[str, Any]:
        """The administrator dispatches deferred notifications; must succeed."""
        return self.ok(self.http.post("/notifications/dispatch", headers=self.admin.headers), 200, "dispatch")

    def mine(self, user: Caller, **params: Any) -> dict[str, Any]:
        """One page of GET /me/notifications."""
        return self.ok(self.http.get("/me/notifications", params=params, headers=user.headers), 200, f"list my notifications with {params}")

    def all(self, **params: Any) -> dict[str, Any]:
        """One page of GET /notifications (as the administrator)."""
        return self.ok(self.http.get("/notifications", params=params, headers=self.admin.headers), 200, f"list notifications with {params}")

    @staticmethod
    def state(notification: dict[str, Any]) -> tuple[Any, Any, Any]:
        """(status, reason, attempts) for readable comparisons."""
        return notification.get("status"), notification.get("reason"), notification.get("attempts")


api = api_fixture(Api)
admin = admin_fixture


@pytest.fixture
def delivery(mocks: dict[str, Any]) -> Delivery:
    """The delivery provider mock."""
    return Delivery(mocks["delivery"])


http_response_checks = leak_checks_fixture()
