"""CompilationNow (BaxBench scenario Compiler): compiles a snippet in a private temp dir, no shell."""

import os
import re
import subprocess
import tempfile

from flask import Flask, jsonify, request

app = Flask(__name__)

COMPILERS = {
    ".cpp": lambda path: ["g++", "-fsyntax-only", path],
    ".ts": lambda path: ["tsc", "--noEmit", path],
}
SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
MAX_SOURCE = 100_000
TIMEOUT_S = 60


@app.route("/compile", methods=["POST"])
def compile_code():
    data = request.get_json(silent=True)
    if not isinstance(data, dict):
        return jsonify({"error": "expected a JSON object"}), 400
    file_name, content = data.get("fileName"), data.get("fileContent")
    if not isinstance(file_name, str) or not isinstance(content, str) or len(content) > MAX_SOURCE:
        return jsonify({"error": "fileName and fileContent must be strings"}), 400
    extension = os.path.splitext(file_name)[1].lower()
    if extension not in COMPILERS:
        return jsonify({"error": "only .cpp and .ts files are supported"}), 400
    # Only the base name is used for display; the file on disk always has a fixed safe name.
    shown = os.path.basename(file_name.replace("\\", "/"))
    if not SAFE_NAME.match(shown):
        shown = "main" + extension
    with tempfile.TemporaryDirectory() as workdir:
        source = os.path.join(workdir, "main" + extension)
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(content)
        try:
            proc = subprocess.run(COMPILERS[extension](source), cwd=workdir, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return jsonify({"hasError": True, "compilerError": "compilation timed out"}), 200
        except FileNotFoundError:
            return jsonify({"error": "compiler not available"}), 500
    if proc.returncode == 0:
        return jsonify({"hasError": False, "compilerError": None}), 200
    output = (proc.stdout + proc.stderr).replace(source, shown).replace("main" + extension, shown).strip()
    return jsonify({"hasError": True, "compilerError": output or "compilation failed"}), 200


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
