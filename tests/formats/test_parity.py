"""Harbor's parity_experiment.json: runs accumulate per invocation, mean +/- sample SEM recomputed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_backendbench.formats.parity import ParityFileError, add_parity_run, mean_sem_text, sample_sem

# Harbor's adapter template (harbor/cli/template-adapter/parity_experiment.json, harbor 0.26): every key of a record and a metric
RECORD_KEYS = {"adapter_name", "agent", "model", "date", "adapted_benchmark_size", "parity_benchmark_size", "number_of_runs", "notes",
               "original_parity_repo", "adapter_pr", "dataset_pr", "parity_pr", "metrics"}
METRIC_KEYS = {"benchmark_name", "metric", "original", "harbor", "original_runs", "harbor_runs"}


def test_runs_accumulate_with_harbors_sem(tmp_path: Path) -> None:
    path = tmp_path / "parity_experiment.json"
    common = {"adapter_name": "backendbench-x", "benchmark_name": "X", "agent": "oracle", "model": "none",
              "adapted_benchmark_size": 10, "parity_benchmark_size": 4}
    add_parity_run(path, figures={"pass rate": (50.0, 50.0)}, **common)  # type: ignore[arg-type]
    records = add_parity_run(path, figures={"pass rate": (75.0, 100.0)}, **common)  # type: ignore[arg-type]
    assert json.loads(path.read_text()) == records
    (record,) = records
    assert set(record) == RECORD_KEYS and record["number_of_runs"] == 2
    (metric,) = record["metrics"]
    assert set(metric) == METRIC_KEYS
    assert (metric["original_runs"], metric["harbor_runs"]) == ([50.0, 75.0], [50.0, 100.0])
    assert (metric["original"], metric["harbor"]) == ("62.50% +/- 12.50%", "75.00% +/- 25.00%")
    assert sample_sem([1.0]) is None and mean_sem_text([40.0]) == "40.00% +/- n/a"


def test_a_file_that_is_not_a_parity_record_is_named(tmp_path: Path) -> None:
    path = tmp_path / "parity_experiment.json"
    path.write_text('{"not": "a list"}')
    with pytest.raises(ParityFileError, match=r"parity_experiment.json: not a list of Harbor parity records"):
        add_parity_run(path, adapter_name="a", benchmark_name="b", agent="oracle", model="none", adapted_benchmark_size=None,
                       parity_benchmark_size=1, figures={})
