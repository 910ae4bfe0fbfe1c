"""Importing BaxBench (logic-star-ai/baxbench): its scenarios as tasks, its tests run unchanged."""

from __future__ import annotations

from .frameworks import SUPPORTED, UNSUPPORTED
from .importer import BaxBenchFormatError, ImportSummary, import_baxbench

__all__ = ["SUPPORTED", "UNSUPPORTED", "BaxBenchFormatError", "ImportSummary", "import_baxbench"]
