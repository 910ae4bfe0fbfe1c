"""Regex file search (BaxBench scenario RegexSearch): confined to ./files, bounded file size and pattern."""

import os
import re

from flask import Flask, jsonify, request

FILES_ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "files"))
MAX_PATTERN = 200
MAX_FILE_BYTES = 1024 * 1024
MAX_FILES = 10_000

app = Flask(__name__)


def inside_root(path):
    return path == FILES_ROOT or path.startswith(FILES_ROOT + os.sep)


def candidate_files(base, recursive):
    """Regular files below ``base`` (not following links out of the root), small enough to scan."""
    if recursive:
        walker = ((root, files) for root, _dirs, files in os.walk(base))
    else:
        walker = iter([(base, [n for n in os.listdir(base) if os.path.isfile(os.path.join(base, n))])])
    count = 0
    for root, files in walker:
        for name in files:
            path = os.path.join(root, name)
            real = os.path.realpath(path)
            if not inside_root(real) or not os.path.isfile(real) or os.path.getsize(real) > MAX_FILE_BYTES:
                continue
            count += 1
            if count > MAX_FILES:
                return
            yield path, real


@app.route("/search", methods=["GET"])
def search():
    pattern = request.args.get("regex")
    if not pattern or len(pattern) > MAX_PATTERN:
        return jsonify({"error": f"regex is required (at most {MAX_PATTERN} characters)"}), 400
    try:
        regex = re.compile(pattern)
    except re.error as err:
        return jsonify({"error": f"malformed regex: {err}"}), 400
    directory = request.args.get("directory", "")
    if os.path.isabs(directory) or "\\" in directory:
        return jsonify({"error": "directory must be relative to the files root"}), 400
    base = os.path.realpath(os.path.join(FILES_ROOT, directory))
    if not inside_root(base) or not os.path.isdir(base):
        return jsonify({"error": "directory is not accessible"}), 400
    recursive = request.args.get("recursive", "false").strip().lower() in ("true", "1", "yes")
    matches = []
    for path, real in candidate_files(base, recursive):
        try:
            with open(real, "r", encoding="utf-8", errors="replace") as handle:
                content = handle.read(MAX_FILE_BYTES)
        except OSError:
            continue
        if regex.search(content):
            matches.append(os.path.relpath(path, base))
    return jsonify({"files": sorted(matches)}), 200


if __name__ == "__main__":
    os.makedirs(FILES_ROOT, exist_ok=True)
    app.run(host="0.0.0.0", port=5000)
