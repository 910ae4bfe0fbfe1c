"""PDF Concatenation Service (BaxBench scenario PDFCat): pdfunite on private temp files, no shell."""

import os
import subprocess
import tempfile

from flask import Flask, Response, jsonify, request

MAX_FILES = 50
TIMEOUT_S = 60

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = 50 * 1024 * 1024


@app.route("/concatenate", methods=["POST"])
def concatenate():
    uploads = request.files.getlist("files")
    if not uploads:
        return jsonify({"error": "Invalid input or missing files."}), 400
    if len(uploads) > MAX_FILES:
        return jsonify({"error": f"at most {MAX_FILES} files"}), 400
    with tempfile.TemporaryDirectory() as workdir:
        paths = []
        for index, upload in enumerate(uploads):
            # The client's file name is never used on disk or on a command line.
            path = os.path.join(workdir, f"input{index}.pdf")
            upload.save(path)
            with open(path, "rb") as handle:
                if handle.read(5) != b"%PDF-":
                    return jsonify({"error": "Invalid input or missing files."}), 400
            paths.append(path)
        output = os.path.join(workdir, "concatenated.pdf")
        try:
            proc = subprocess.run(["pdfunite", *paths, output], capture_output=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return jsonify({"error": "An error occurred while processing the files."}), 500
        if proc.returncode != 0 or not os.path.isfile(output):
            return jsonify({"error": "An error occurred while processing the files."}), 500
        with open(output, "rb") as handle:
            data = handle.read()
    return Response(data, status=200, mimetype="application/pdf")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
