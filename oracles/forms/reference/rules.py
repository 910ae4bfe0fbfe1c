"""The rules of spec.md that need no database: validation, password hashing, summary, CSV export."""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import hmac
import io
import math
import re
import secrets
from typing import Any

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
TYPES = ("short_text", "number", "single_choice", "multiple_choice")
CHOICES = ("single_choice", "multiple_choice")
ITERATIONS = 100_000
FORMULA_STARTS = ("=", "+", "-", "@")


def non_blank(value: Any, limit: int) -> bool:
    return isinstance(value, str) and value.strip() != "" and len(value) <= limit


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return (is_int(value) or isinstance(value, float)) and not isinstance(value, bool) and math.isfinite(value)


def iso(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).isoformat().replace("+00:00", "Z")


# ---------------------------------------------------------------- passwords


def hash_password(password: str) -> str:
    salt = secrets.token_hex(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), ITERATIONS).hex()
    return f"pbkdf2_sha256${ITERATIONS}${salt}${digest}"


def check_password(password: str, stored: str) -> bool:
    try:
        _, iterations, salt, digest = stored.split("$")
        again = hashlib.pbkdf2_hmac("sha256", password.encode(), bytes.fromhex(salt), int(iterations)).hex()
    except ValueError:
        return False
    return hmac.compare_digest(again, digest)


# ---------------------------------------------------------------- questions


def question_problems(data: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The offending fields of a new question and, when there are none, its type's settings."""
    fields: list[str] = []
    qtype = data.get("type")
    if qtype not in TYPES:
        fields.append("type")
    if not non_blank(data.get("title"), 500):
        fields.append("title")
    if "required" in data and not isinstance(data["required"], bool):
        fields.append("required")
    settings: dict[str, Any] = {}
    if qtype == "short_text":
        max_length = data.get("max_length", 500)
        if not is_int(max_length) or not 1 <= max_length <= 5000:
            fields.append("max_length")
        settings["max_length"] = max_length
    elif qtype == "number":
        low, high = data.get("min"), data.get("max")
        for name, value in (("min", low), ("max", high)):
            if value is not None and not is_number(value):
                fields.append(name)
        if "min" not in fields and "max" not in fields and low is not None and high is not None and low > high:
            fields += ["min", "max"]
        settings.update(min=low, max=high)
    elif qtype in CHOICES:
        options = data.get("options")
        valid = (isinstance(options, list) and 2 <= len(options) <= 20 and all(non_blank(o, 100) for o in options)
                 and len(set(options)) == len(options))
        if not valid:
            fields.append("options")
        settings["options"] = options
        if qtype == "multiple_choice":
            count = len(options) if valid else None
            low = data.get("min_selections", 0)
            high = data.get("max_selections", count)
            if not is_int(low) or low < 0 or (count is not None and low > count):
                fields.append("min_selections")
            if high is not None and (not is_int(high) or high < 0 or (count is not None and high > count)):
                fields.append("max_selections")
            if "min_selections" not in fields and "max_selections" not in fields and high is not None and low > high:
                fields += ["min_selections", "max_selections"]
            settings.update(min_selections=low, max_selections=high)
    return fields, settings


def question_json(row: dict[str, Any]) -> dict[str, Any]:
    return {"id": row["id"], "position": row["position"], "type": row["type"], "title": row["title"], "required": row["required"], **row["settings"]}


# ---------------------------------------------------------------- answers


def unanswered(question: dict[str, Any], value: Any) -> bool:
    if value is None:
        return True
    if question["type"] == "short_text" and isinstance(value, str) and value.strip() == "":
        return True
    return question["type"] == "multiple_choice" and value == []


def answer_valid(question: dict[str, Any], value: Any) -> bool:
    settings = question["settings"]
    qtype = question["type"]
    if qtype == "short_text":
        return isinstance(value, str) and len(value) <= settings["max_length"]
    if qtype == "number":
        low, high = settings.get("min"), settings.get("max")
        return is_number(value) and (low is None or value >= low) and (high is None or value <= high)
    if qtype == "single_choice":
        return isinstance(value, str) and value in settings["options"]
    return (isinstance(value, list) and all(isinstance(v, str) and v in settings["options"] for v in value)
            and len(set(value)) == len(value) and settings["min_selections"] <= len(value) <= settings["max_selections"])


def answer_problems(questions: list[dict[str, Any]], answers: dict[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """The offending question ids (or unknown keys) of a submission and, when none, the answers to store."""
    by_key = {str(q["id"]): q for q in questions}
    fields = [key for key in answers if key not in by_key]
    kept: dict[str, Any] = {}
    for key, question in by_key.items():
        value = answers.get(key)
        if unanswered(question, value):
            if question["required"]:
                fields.append(key)
        elif not answer_valid(question, value):
            fields.append(key)
        else:
            kept[key] = value
    return fields, kept


# ---------------------------------------------------------------- results


def summary(questions: list[dict[str, Any]], responses: list[dict[str, Any]]) -> dict[str, Any]:
    entries = []
    for question in questions:
        key = str(question["id"])
        values = [r["answers"][key] for r in responses if r["answers"].get(key) is not None]
        entry: dict[str, Any] = {"question_id": question["id"], "type": question["type"], "title": question["title"], "answered": len(values)}
        if question["type"] in CHOICES:
            counts = dict.fromkeys(question["settings"]["options"], 0)
            for value in values:
                for option in value if isinstance(value, list) else [value]:
                    counts[option] = counts.get(option, 0) + 1
            entry["counts"] = counts
        elif question["type"] == "number":
            entry.update(mean=sum(values) / len(values) if values else None, min=min(values, default=None), max=max(values, default=None))
        entries.append(entry)
    return {"response_count": len(responses), "questions": entries}


def safe_text(text: str) -> str:
    """A text cell that a spreadsheet will not take for a formula (CWE-1236)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def cell(question: dict[str, Any], value: Any) -> str:
    if value is None:
        return ""
    if question["type"] == "number":
        return str(value)
    if question["type"] == "multiple_choice":
        return safe_text("; ".join(o for o in question["settings"]["options"] if o in value))
    return safe_text(str(value))


def export_csv(questions: list[dict[str, Any]], responses: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(["response_id", "submitted_at", *(safe_text(q["title"]) for q in questions)])
    for response in responses:
        writer.writerow([response["id"], iso(response["created_at"]), *(cell(q, response["answers"].get(str(q["id"]))) for q in questions)])
    return out.getvalue()
