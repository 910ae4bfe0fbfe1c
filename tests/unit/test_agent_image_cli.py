"""``backendbench agent-image`` refuses an unknown ``--with`` name before it touches an engine."""

from __future__ import annotations

import argparse

import pytest

from pytest_backendbench.cli import agent_image
from pytest_backendbench.errors import HarnessError


def test_an_unknown_agent_cli_is_named_with_the_choices_before_any_build() -> None:
    args = argparse.Namespace(with_=["mini", "nope"], base_image="no-such/base:image")
    with pytest.raises(HarnessError, match=r"--with nope: no built-in agent CLI of that name; choose from .*aider.*mini"):
        agent_image.run(args)
