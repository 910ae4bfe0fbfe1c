"""Request validation (pydantic, strict types) and response shaping."""
import re
from datetime import datetime, timezone
from typing import Any, List

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, ValidationError, field_validator


class Invalid(Exception):
    """422: the listed fields are missing or invalid."""

    def __init__(self, fields: List[str], message: str):
        super().__init__(message)
        self.fields = fields
        self.message = message


_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+")


def parse_starts_at(text: str) -> datetime:
    """ISO 8601 extended date-time; a value without offset is UTC."""
    if not _DATE_TIME.match(text) or text[-1:] in "Tt " or "\x00" in text:
        raise ValueError("not an ISO 8601 date-time")
    norm = text
    if norm[-1] in "zZ":
        norm = norm[:-1] + "+00:00"
    norm = norm[:10] + "T" + norm[11:]
    value = datetime.fromisoformat(norm)  # ValueError on nonsense
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    value.astimezone(timezone.utc)  # OverflowError at the range edges
    return value


def _non_blank(value: str, limit: int) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    if len(value) > limit:
        raise ValueError("too long")
    if "\x00" in value:
        raise ValueError("NUL character")
    return value


class EventIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    title: StrictStr
    starts_at: StrictStr
    capacity: StrictInt

    @field_validator("title")
    @classmethod
    def _title(cls, v: str) -> str:
        return _non_blank(v, 120)

    @field_validator("starts_at")
    @classmethod
    def _starts(cls, v: str) -> str:
        try:
            parse_starts_at(v)
        except (ValueError, OverflowError) as exc:
            raise ValueError(str(exc)) from None
        return v

    @field_validator("capacity")
    @classmethod
    def _capacity(cls, v: int) -> int:
        if not 1 <= v <= 1000:
            raise ValueError("capacity must be from 1 to 1000")
        return v


class RegistrationIn(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")
    name: StrictStr
    email: StrictStr

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return _non_blank(v, 100)

    @field_validator("email")
    @classmethod
    def _email(cls, v: str) -> str:
        if len(v) > 254 or not _EMAIL.fullmatch(v) or "\x00" in v:
            raise ValueError("not a valid email address")
        return v


def validate(model, body: Any):
    if not isinstance(body, dict):
        raise Invalid(["body"], "the body must be a JSON object")
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        fields: List[str] = []
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else "body"
            if name not in fields:
                fields.append(name)
        raise Invalid(fields, "invalid or missing: " + ", ".join(fields)) from None


def utc_text(value: datetime) -> str:
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def event_out(row) -> dict:
    return {
        "id": row["id"],
        "title": row["title"],
        "starts_at": utc_text(row["starts_at"]),
        "capacity": row["capacity"],
        "seats_left": row["capacity"] - row["taken"],
        "created_at": utc_text(row["created_at"]),
    }


def registration_out(row) -> dict:
    return {
        "id": row["id"],
        "event_id": row["event_id"],
        "name": row["name"],
        "email": row["email"],
        "created_at": utc_text(row["created_at"]),
    }
