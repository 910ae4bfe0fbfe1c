"""Parity records in Harbor's schema: ``parity_experiment.json``.

Harbor proves each benchmark adapter with a ``parity_experiment.json`` (its adapter template
and review guide): a list of records, one per agent and model, each with the benchmark sizes,
``number_of_runs`` and ``metrics``: per metric the original runner's and the adapter's score as
``mean +/- sample SEM`` and every run's score (``original_runs``, ``harbor_runs``). The harness
takes Harbor's place in that record (its figures under ``harbor``/``harbor_runs``, as the schema
names them); a bench adds one run per invocation, so repeated invocations build the runs up.

Sample SEM is Harbor's: ``sqrt(sum((x - mean)^2) / (n (n - 1)))``, undefined for one run
(written ``+/- n/a``).
"""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

PARITY_FILE = "parity_experiment.json"


class ParityFileError(ValueError):
    """An existing parity file that is not a list of Harbor parity records."""


def sample_sem(values: list[float]) -> float | None:
    """Harbor's sample standard error of the mean; None for fewer than two runs."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((x - mean) ** 2 for x in values) / (n * (n - 1)))


def mean_sem_text(values: list[float], unit: str = "%") -> str:
    """``45.2% +/- 1.3%`` (Harbor's template), ``+/- n/a`` for one run."""
    if not values:
        return "n/a"
    mean, sem = sum(values) / len(values), sample_sem(values)
    return f"{mean:.2f}{unit} +/- " + (f"{sem:.2f}{unit}" if sem is not None else "n/a")


def add_parity_run(
    path: Path,
    *,
    adapter_name: str,
    benchmark_name: str,
    agent: str,
    model: str,
    adapted_benchmark_size: int | None,
    parity_benchmark_size: int,
    figures: dict[str, tuple[float, float]],
    notes: str = "",
    original_parity_repo: str | None = None,
) -> list[dict[str, Any]]:
    """Add one run's ``{metric: (original, harness)}`` figures to ``path`` (created if missing); return the records.

    Runs go to the record of the same adapter, agent, model and parity size; means and SEMs are recomputed.
    """
    records = read_parity(path) if path.is_file() else []
    key = (adapter_name, agent, model, parity_benchmark_size)
    record = next((r for r in records if (r.get("adapter_name"), r.get("agent"), r.get("model"), r.get("parity_benchmark_size")) == key), None)
    if record is None:
        record = {
            "adapter_name": adapter_name, "agent": agent, "model": model, "date": "", "adapted_benchmark_size": adapted_benchmark_size,
            "parity_benchmark_size": parity_benchmark_size, "number_of_runs": 0, "notes": notes or None,
            "original_parity_repo": original_parity_repo, "adapter_pr": [], "dataset_pr": [], "parity_pr": [], "metrics": [],
        }
        records.append(record)
    for name, (original, harness) in figures.items():
        metric = next((m for m in record["metrics"] if m.get("metric") == name), None)
        if metric is None:
            metric = {"benchmark_name": benchmark_name, "metric": name, "original": "", "harbor": "", "original_runs": [], "harbor_runs": []}
            record["metrics"].append(metric)
        metric["original_runs"].append(round(original, 4))
        metric["harbor_runs"].append(round(harness, 4))
        metric["original"] = mean_sem_text(metric["original_runs"])
        metric["harbor"] = mean_sem_text(metric["harbor_runs"])
    record["number_of_runs"] = max((len(m["harbor_runs"]) for m in record["metrics"]), default=0)
    record["date"] = datetime.date.today().isoformat()
    if notes:
        record["notes"] = notes
    path.write_text(json.dumps(records, indent=2) + "\n", encoding="utf-8")
    return records


def read_parity(path: Path) -> list[dict[str, Any]]:
    """The records of a ``parity_experiment.json``; ``ParityFileError`` naming the file when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ParityFileError(f"{path}: not JSON ({err}); remove it or name another --parity-out file") from err
    if not isinstance(data, list) or not all(isinstance(r, dict) and isinstance(r.get("metrics"), list) for r in data):
        raise ParityFileError(f"{path}: not a list of Harbor parity records (each with 'metrics'); remove it or name another file")
    return data
