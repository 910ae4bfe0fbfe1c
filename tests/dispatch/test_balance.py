"""Shards balanced by recorded durations (pure functions; no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_backendbench.dispatch.balance import (
    durations_from_report,
    expected_wall,
    load_durations,
    shard_tasks,
    split_by_duration,
    split_by_id,
    write_durations,
)
from pytest_backendbench.errors import HarnessError

IDS = ["a", "b", "c", "d", "e"]


def test_without_durations_every_nth_task_of_the_sorted_ids() -> None:
    assert split_by_id(["e", "a", "c", "b", "d"], 2) == [["a", "c", "e"], ["b", "d"]]
    assert shard_tasks(IDS, 2, 2) == ["b", "d"]


def test_longest_first_fills_the_least_loaded_shard() -> None:
    durations = {"a": 100.0, "b": 60.0, "c": 50.0, "d": 40.0, "e": 10.0}
    shards = split_by_duration(IDS, 2, durations)
    # a -> 1; b, c -> 2 (60, 110); d -> 1 (140); e -> 2 (120)
    assert shards == [["a", "d"], ["b", "c", "e"]]
    assert expected_wall(shards, durations) == [140.0, 120.0]
    # The split by id would put a, c, e (160 s) together: the balanced one is never worse.
    assert max(expected_wall(split_by_id(IDS, 2), durations)) >= max(expected_wall(shards, durations))


def test_every_task_lands_in_exactly_one_shard_and_the_split_is_deterministic() -> None:
    durations = {t: float(i * 7 % 5 + 1) for i, t in enumerate(IDS)}
    for count in (1, 2, 3, 4, 7):
        shards = split_by_duration(IDS, count, durations)
        assert sorted(t for s in shards for t in s) == IDS
        assert shards == split_by_duration(list(reversed(IDS)), count, dict(reversed(list(durations.items()))))


def test_unknown_tasks_weigh_the_median_of_known_ones() -> None:
    shards = split_by_duration(["big", "new1", "new2", "small"], 2, {"big": 100.0, "small": 1.0})
    # new tasks weigh 50.5 each: big (100) + small (1) against new1 + new2 (101).
    assert shards == [["big", "small"], ["new1", "new2"]]


def test_durations_round_trip_and_come_from_reports(tmp_path: Path) -> None:
    report = {"tasks": [
        {"task": "a", "items": [{"duration": 1.5}, {"duration": 2.0}]},
        {"task": "a", "items": [{"duration": 1.0}]},
        {"task": "b", "items": []},
    ]}
    assert durations_from_report(report) == {"a": 4.5, "b": 0.0}
    (tmp_path / "report.json").write_text(json.dumps(report))
    assert load_durations(tmp_path) == {"a": 4.5, "b": 0.0}
    write_durations(tmp_path / "durations.json", {"a": 3.0}, previous={"a": 9.0, "z": 2.0})
    assert load_durations(tmp_path / "durations.json") == {"a": 3.0, "z": 2.0}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not a readable JSON file"),
        ('{"durations": {"a": -1}}', "durations of a are not non-negative numbers"),
        ('{"something": 1}', "expected a durations.json"),
    ],
)
def test_a_bad_durations_file_says_what_is_wrong(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "durations.json"
    path.write_text(content)
    with pytest.raises(HarnessError, match=message):
        load_durations(path)
