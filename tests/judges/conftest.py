"""The judge tests reuse the browser fixtures of tests/bdd (static server, shared browser) and its browser-marker rule."""

from __future__ import annotations

from ..bdd.conftest import pytest_runtest_setup, serve, session_browser  # noqa: F401 - fixtures and hook, re-exported
