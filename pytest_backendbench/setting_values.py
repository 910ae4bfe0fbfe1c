"""How a setting's text becomes its value: the parsers of config.py's settings table.

Each parser's docstring is what a refused value is told it should be ("expected a size such
as 512m or 2g"), so a parser raises ``ValueError`` and says nothing else. Apart from config.py
so that every concern's settings module (llm/, agents/, bdd/, judges/, appbuild/) can name
them without the table's machinery.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

TRUE_WORDS = ("1", "true", "yes", "on")


def shown_default(value: Any) -> bool:
    """Whether a default is worth printing (not None, an empty list or a flag's False)."""
    return not (value is None or value is False or value == [])


def true_word(text: str) -> bool:
    """1, true, yes or on (true); anything else is false"""
    return text.strip().lower() in TRUE_WORDS


def comma_list(text: str) -> list[str]:
    """names separated by commas or lines"""
    return [part.strip() for part in text.replace("\n", ",").split(",") if part.strip()]


def positive_count(text: str) -> int:
    """a whole number of at least 1"""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def count(text: str) -> int:
    """a whole number of at least 0"""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def seconds(text: str) -> float:
    """a number of seconds greater than 0 (e.g. 30 or 2.5)"""
    return positive_number(text)


def positive_number(text: str) -> float:
    """a number greater than 0"""
    value = float(text)
    if not value > 0:
        raise ValueError(text)
    return value


SIZE = re.compile(r"(\d+(\.\d+)?)([bkmg])?", re.IGNORECASE)


def size(text: str) -> str:
    """a size such as 512m or 2g (a number, then b, k, m or g)"""
    match = SIZE.fullmatch(text)
    if match is None or float(match.group(1)) <= 0:
        raise ValueError(text)
    return text.lower()


def http_url(text: str) -> str:
    """an http:// or https:// URL with a host (e.g. http://localhost:8000/v1)"""
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(text)
    return text


def existing_folder(text: str) -> str:
    """the path of a folder that exists"""
    if not Path(text).expanduser().is_dir():
        raise ValueError(text)
    return text


def existing_path(text: str) -> str:
    """the path of a file or folder that exists"""
    if not Path(text).expanduser().exists():
        raise ValueError(text)
    return text


def shard_spec(text: str) -> str:
    """K/N, whole numbers with 1 <= K <= N (e.g. 2/3)"""
    k, slash, n = text.partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise ValueError(text)
    return text


def oracle_tier_name(text: str) -> str:
    """base, r1, r2, ... or final"""
    if text not in ("base", "final") and not re.fullmatch(r"r\d+", text):
        raise ValueError(text)
    return text
