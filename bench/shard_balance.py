"""Shards balanced by recorded durations vs. the split by task id, on the bundled suite.

For N = 2, 3, 4 it prints each split's longest shard (the run's expected wall time when the
shards run side by side), the ideal total/N, the floor max(total/N, longest task) no split
of whole tasks can beat, and each split's excess over total/N. The target is within 15 % of
total/N; where one task alone is longer than total/N no split of whole tasks can reach it,
and the table says so.

    python bench/shard_balance.py                               # bench/data/durations-reference.json
    python bench/shard_balance.py --durations backendbench-report   # a report folder, report.json or durations.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pytest_backendbench.dispatch.balance import expected_wall, load_durations, split_by_duration, split_by_id

DEFAULT = Path(__file__).resolve().parent / "data" / "durations-reference.json"
TARGET = 0.15


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--durations", type=Path, default=DEFAULT, help="durations.json, report.json or a report folder")
    parser.add_argument("--shards", type=int, nargs="+", default=[2, 3, 4])
    args = parser.parse_args()
    durations = load_durations(args.durations)
    tasks = sorted(durations)
    total = sum(durations.values())
    longest_task = max(durations.values())
    print(f"{len(tasks)} tasks, {total:.1f} s in all, longest task {longest_task:.1f} s ({max(durations, key=durations.__getitem__)})")
    print(f"source: {args.durations}")
    print()
    print("| N | total/N | floor | by id: longest | by duration: longest | by id vs total/N | by duration vs total/N | within 15%? | gain |")
    print("|---|---|---|---|---|---|---|---|---|")
    for count in args.shards:
        ideal = total / count
        floor = max(ideal, longest_task)
        by_id = max(expected_wall(split_by_id(tasks, count), durations))
        balanced = max(expected_wall(split_by_duration(tasks, count, durations), durations))
        verdict = "yes" if balanced <= ideal * (1 + TARGET) else ("no: one task exceeds total/N" if longest_task > ideal * (1 + TARGET) else "no")
        print(
            f"| {count} | {ideal:.1f} s | {floor:.1f} s | {by_id:.1f} s | {balanced:.1f} s | {by_id / ideal - 1:+.1%} | "
            f"{balanced / ideal - 1:+.1%} | {verdict} | {by_id / balanced:.2f}x |"
        )


if __name__ == "__main__":
    main()
