"""The run command of a task with its own Dockerfile, exported to Harbor: its entry point, made fresh.

The task's image starts the candidate with its ``ENTRYPOINT`` on a fixed port (BaxBench: 5000),
and ``isolation: item`` gives every item a fresh container. Inside Harbor's environment the
verifier starts the candidate as a local process instead (the process runtime, on a port of its
choosing, ``$PORT``), so each start of this launcher:

1. makes the candidate's folder what it was when the verifier began (a copy taken then): files the
   previous item's server wrote, its SQLite database above all, are gone, as in a fresh container;
2. starts the entry point in that folder (its command line as in the image, so BaxBench's crash
   check, ``ps aux`` looking for it, finds it);
3. forwards ``$PORT`` to the entry point's fixed port, and ends when the entry point ends.

The settings come from a JSON file the verifier writes (``harbor_verify``): ``entry`` (the
command), ``port`` (its fixed port), ``workdir`` and ``snapshot`` (the copy of the folder).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from ..runtime.forwarder import LocalForwarder


def restore(workdir: Path, snapshot: Path) -> None:
    """Make ``workdir`` hold exactly the snapshot's files."""
    for entry in workdir.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    shutil.copytree(snapshot, workdir, dirs_exist_ok=True, symlinks=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True, help="the JSON file harbor_verify wrote")
    args = parser.parse_args(argv)
    config: dict[str, Any] = json.loads(args.config.read_text(encoding="utf-8"))
    workdir = Path(config["workdir"])
    restore(workdir, Path(config["snapshot"]))
    entry = subprocess.Popen(shlex.split(config["entry"]), cwd=workdir)
    signal.signal(signal.SIGTERM, lambda *_: entry.terminate())
    target = ("127.0.0.1", int(config["port"]))
    forwarder = LocalForwarder(lambda: target, name="entry point")
    forwarder.start(int(os.environ["PORT"]))
    try:
        return entry.wait()
    finally:
        forwarder.stop()


if __name__ == "__main__":
    sys.exit(main())
