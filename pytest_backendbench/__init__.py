"""pytest-backendbench: evaluate generated web services against hidden black-box oracles.

Where things live (ARCHITECTURE.md walks one candidate through them):

- ``plugin.py`` wiring only; ``config.py`` every setting (one table); ``session.py`` what a
  run resolved to; ``hookspecs.py`` our hooks; ``errors.py`` whose fault a failure is.
- ``tasks.py``, ``candidates.py``: benchmark tasks and candidate folders on disk.
- ``collect/``: which files become which items (``routing.py``) and the phase items
  (``phases.py``); ``markers.py`` item kinds and the one marker validator.
- ``runkey.py``, ``taskrun.py``: one candidate run's identity and lifecycle (build, boot, stop).
- ``protocol.py``, ``outcomes.py``: the per-item run protocol and whose fault an exception is.
- ``runtime/``: process and docker runtimes, waits, cleanup.
- Dimensions of checking: ``http/`` (contract, fixtures), ``bdd/`` (Gherkin in a browser),
  ``db/`` (the task's PostgreSQL, statement effects, snapshot cases).
- ``results.py``, ``recorder.py``, ``metrics.py``, ``report/``, ``summary.py``: results to reports.
- ``generators/``: producing candidates (``agents/``: the agents' sandbox and loop); ``dispatch/``: scale-out.
"""

from __future__ import annotations

__version__ = "0.1.0"
