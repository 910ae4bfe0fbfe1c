"""The process runtime installs a Node candidate's npm dependencies (package.json) itself."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..conftest import read_report
from .conftest import _unavailable

SERVER = """
const http = require("http");
const ms = require("ms");  // an npm dependency: found through NODE_PATH, not the candidate's folder
http.createServer((req, res) => {
  res.writeHead(200, {"Content-Type": "application/json"});
  res.end(JSON.stringify({status: "ok", hour: ms("1h")}));
}).listen(Number(process.env.PORT || 8000), process.env.HOST || "0.0.0.0");
"""


@pytest.mark.slow
def test_a_node_candidates_dependencies_are_installed_once_and_found(pytester: pytest.Pytester, bench: Path) -> None:
    if shutil.which("npm") is None:
        _unavailable("needs npm (apt-get install nodejs npm)")
    candidate = bench / "node-candidate"
    candidate.mkdir()
    (candidate / "server.js").write_text(SERVER)
    (candidate / "package.json").write_text(json.dumps({"name": "c", "version": "1.0.0", "private": True, "dependencies": {"ms": "2.1.3"}}))
    (candidate / "candidate.yaml").write_text("task: notes\nrun: node server.js\n")
    phases = {}
    for attempt in ("first", "cached"):
        pytester.runpytest(f"--candidate={candidate}", "--bench-runtime=process", "-p", "no:cacheprovider", f"--bench-report-dir={attempt}")
        task = read_report(bench / attempt)["tasks"][0]
        phases[attempt] = ({i["nodeid"].rpartition("::")[2]: i["outcome"] for i in task["items"] if i["kind"] in ("build", "boot", "smoke")}, task["build_cached"])
    assert phases["first"][0] == {"build": "passed", "boot": "passed", "smoke": "passed"}, phases
    assert phases["first"][1] is False and phases["cached"][1] is True
    assert not (candidate / "node_modules").exists()  # nothing written into the candidate's folder
