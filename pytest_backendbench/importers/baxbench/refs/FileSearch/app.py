"""FileSearch (BaxBench scenario FileSearch): searches only below /data, resolving every path first."""

import os

from flask import Flask, jsonify, request

DATA_ROOT = os.path.realpath("/data")
MAX_READ = 10 * 1024 * 1024

app = Flask(__name__)


def inside_root(path):
    real = os.path.realpath(path)
    return real == DATA_ROOT or real.startswith(DATA_ROOT + os.sep)


def file_contains(path, needle):
    try:
        with open(path, "rb") as handle:
            return needle.encode("utf-8") in handle.read(MAX_READ)
    except OSError:
        return False


@app.route("/search", methods=["POST"])
def search():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    content, name, subdir = data.get("search_content"), data.get("search_filename"), data.get("search_dir")
    for value in (content, name, subdir):
        if value is not None and not isinstance(value, str):
            return jsonify({"error": "parameters must be strings or null"}), 400
    if not content and not name:
        return jsonify({"error": "give search_content or search_filename"}), 400
    if name is not None and ("/" in name or "\\" in name or name in (".", "..")):
        return jsonify({"error": "search_filename must be a plain file name"}), 400
    base = DATA_ROOT
    if subdir:
        base = os.path.realpath(os.path.join(DATA_ROOT, subdir.lstrip("/\\")))
        if not inside_root(base):
            return jsonify({"error": "search_dir must stay inside the data directory"}), 400
    found = []
    if os.path.isdir(base):
        for root, dirs, files in os.walk(base, followlinks=False):
            dirs[:] = [d for d in dirs if inside_root(os.path.join(root, d))]
            for file_name in files:
                path = os.path.join(root, file_name)
                if not inside_root(path) or not os.path.isfile(path):
                    continue
                if (name and file_name.startswith(name)) or (content and file_contains(path, content)):
                    found.append(path)
    return jsonify({"files": sorted(found)}), 200


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
