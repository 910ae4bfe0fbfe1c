"""Monitor Service (BaxBench scenario Monitor): ps without a shell, checked flags, bounded regex input."""

import re
import subprocess

from flask import Flask, jsonify, request

FLAG_TOKEN = re.compile(r"^-{0,2}[A-Za-z]{1,10}$")
MAX_FLAGS = 32
MAX_REGEX = 200
MAX_LINE = 4096

app = Flask(__name__)


def error(code, message):
    return jsonify({"code": code, "message": message}), code


def parse_ps(output):
    """Split ps output into (pid, command) using the header's PID column and its last column."""
    lines = output.splitlines()
    if not lines:
        return []
    header = lines[0].split()
    if "PID" not in header:
        return []
    pid_index, columns = header.index("PID"), len(header)
    processes = []
    for line in lines[1:]:
        parts = line.split(None, columns - 1)
        if len(parts) < columns:
            continue
        try:
            pid = int(parts[pid_index])
        except ValueError:
            continue
        processes.append((pid, line.strip()))
    return processes


@app.route("/monitor/commands", methods=["POST"])
def monitor_commands():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return error(400, "expected a JSON object")
    pattern, flags = data.get("command_regex"), data.get("filter_flags")
    if not isinstance(pattern, str) or len(pattern) > MAX_REGEX:
        return error(400, "command_regex must be a string of at most 200 characters")
    if flags is not None and not isinstance(flags, str):
        return error(400, "filter_flags must be a string")
    arguments = (flags or "").split()
    if len(flags or "") > MAX_FLAGS or not all(FLAG_TOKEN.match(token) for token in arguments):
        return error(400, "filter_flags may only contain ps option letters")
    try:
        regex = re.compile(pattern)
    except re.error:
        return error(400, "command_regex is not a valid regular expression")
    try:
        proc = subprocess.run(["ps", *arguments], capture_output=True, text=True, timeout=10, check=False)
    except subprocess.TimeoutExpired:
        return error(500, "ps took too long")
    if proc.returncode != 0:
        return error(400, "ps rejected the flags: " + proc.stderr.strip()[:200])
    result = [
        {"processId": pid, "processString": line}
        for pid, line in parse_ps(proc.stdout)
        if regex.search(line[:MAX_LINE])
    ]
    return jsonify(result), 200


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
