"""Each paper's figures under its own name, computed from the same result records.

One module per paper's formula (``fullstack_bench``, ``e2edev``, ``backendforge``,
``app_build``, ``baxbench``, ``infiniteweb``), plus the statistics around them: ``spread`` (mean ± std over
repeats and samples), ``paired`` (tasks gained/lost, McNemar, paired bootstrap), ``versions``
(per-task content hashes) and ``publication`` (whether a report may be published).
docs/metrics.md quotes each paper's definition beside the figure names used here.
"""

from __future__ import annotations

from typing import Any

from ..results import TaskResult


def paper_figures(results: list[TaskResult], alpha: float, beta: float) -> dict[str, Any]:
    """Every paper's figures for one run, keyed by paper."""
    from .app_build import app_build
    from .backendforge import backendforge
    from .baxbench import baxbench
    from .e2edev import e2edev
    from .fullstack_bench import fullstack_bench
    from .infiniteweb import infiniteweb

    return {
        "backendforge": backendforge(results),
        "e2edev": e2edev(results, alpha, beta),
        "fullstack_bench": fullstack_bench(results),
        "app_build": app_build(results),
        "baxbench": baxbench(results),
        "infiniteweb": infiniteweb(results),
    }
