"""The `backendbench` console command and the commands that are not a test run.

`main` parses the command line (`cli/main.py`); each command that does real work lives in its
own module here: `doctor` (what this machine can evaluate), `validate` (a task's reference and
mutants), `selfverify` (the coarse PASS/FAIL an agent may see) and `catalogue` (the task page).
"""

from __future__ import annotations

from .main import build_parser, main

__all__ = ["build_parser", "main"]
