"""`python -m pytest_backendbench.cli` is the `backendbench` command."""

from __future__ import annotations

import sys

from .main import main

sys.exit(main())
