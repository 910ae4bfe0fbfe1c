"""What the plugin costs a pytest start-up in a project that does not use it.

Runs ``python -X importtime -m pytest --co -q`` in an empty temp project (one trivial test)
with the plugin and with ``-p no:backendbench``, several times, and prints the median total
import time of each, the difference, and the cumulative import time of
``pytest_backendbench.plugin`` and of the heavy libraries it might pull in. Prints figures,
asserts nothing (the machine is shared; timings are noisy, compare medians).

    python bench/plugin_startup.py [--runs 5]
    PYTHONPATH=<an older checkout> python bench/plugin_startup.py   # the same for another version
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HEAVY = ("openapi_core", "docker", "selenium", "behave", "psycopg", "sqlglot", "jsonschema", "requests", "yaml")
LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def measure(project: Path, extra: list[str]) -> tuple[float, dict[str, float], dict[str, float]]:
    """Total self import time (ms), the cumulative ms of interesting imports, and every
    module's self time (ms)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider", *extra],
        cwd=project, capture_output=True, text=True, check=False,
    )
    total = 0
    cumulative: dict[str, float] = {}
    own: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        match = LINE.match(line)
        if not match:
            continue
        total += int(match.group(1))
        name = match.group(4)
        own[name] = int(match.group(1)) / 1000
        if name == "pytest_backendbench.plugin" or name in HEAVY:
            cumulative[name] = max(cumulative.get(name, 0.0), int(match.group(2)) / 1000)
    return total / 1000, cumulative, own


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        (project / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
        with_plugin: list[float] = []
        without: list[float] = []
        heavy: dict[str, list[float]] = {}
        extra_modules: list[tuple[int, float]] = []
        for _ in range(args.runs):
            total, cumulative, own = measure(project, [])
            with_plugin.append(total)
            for name, ms in cumulative.items():
                heavy.setdefault(name, []).append(ms)
            total_without, _, own_without = measure(project, ["-p", "no:backendbench"])
            without.append(total_without)
            only_with = set(own) - set(own_without)
            extra_modules.append((len(only_with), sum(own[m] for m in only_with)))
    a, b = statistics.median(with_plugin), statistics.median(without)
    print(f"pytest --co -q, empty project, median of {args.runs}:")
    print(f"  with the plugin:     {a:8.1f} ms total import time")
    print(f"  -p no:backendbench:  {b:8.1f} ms")
    print(f"  plugin's share:      {a - b:8.1f} ms (difference of totals: noisy on a busy machine)")
    count = statistics.median(n for n, _ in extra_modules)
    ms = statistics.median(t for _, t in extra_modules)
    print(f"  modules imported only with the plugin: {count:.0f}, their own import time {ms:.1f} ms (median)")
    for name in ("pytest_backendbench.plugin", *HEAVY):
        if name in heavy:
            print(f"  {name:28s} {statistics.median(heavy[name]):8.1f} ms cumulative (imported)")
    missing = [n for n in HEAVY if n not in heavy]
    print(f"  not imported: {', '.join(missing) or 'none'}")


if __name__ == "__main__":
    main()
