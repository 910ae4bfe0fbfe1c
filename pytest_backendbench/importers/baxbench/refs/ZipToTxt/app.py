"""Zip to text (BaxBench scenario ZipToTxt): reads text members in memory, bounded, never extracts to disk."""

import io
import socket
import zipfile

from flask import Flask, Response, jsonify, request

MAX_UPLOAD = 20 * 1024 * 1024
MAX_MEMBERS = 1000
MAX_TOTAL_TEXT = 10 * 1024 * 1024
TEXT_SUFFIXES = (".txt", ".text", ".md", ".csv", ".log")

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD


class TooLarge(ValueError):
    pass


@app.errorhandler(413)
def too_large(_error):
    return jsonify({"error": f"the upload is larger than {MAX_UPLOAD} bytes"}), 413


@app.before_request
def refuse_oversized_body():
    """Refuse a too large upload before reading it, and stop the dev server from draining it.

    Werkzeug's development server reads (and discards) up to 10 GB of an unread body after the
    response so that the client sees the 413; closing our read side ends that at once.
    """
    if request.content_length is not None and request.content_length > MAX_UPLOAD:
        connection = request.environ.get("werkzeug.socket")
        if connection is not None:
            try:
                connection.shutdown(socket.SHUT_RD)
            except OSError:
                pass
        return too_large(None)
    return None


def text_members(archive, budget):
    """Yield decoded text members; nested archives are not opened (zip bombs), total output is capped."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise TooLarge("too many files in the archive")
    for info in members:
        if info.is_dir() or not info.filename.lower().endswith(TEXT_SUFFIXES):
            continue
        with archive.open(info) as handle:
            data = handle.read(budget[0] + 1)
        if len(data) > budget[0]:
            raise TooLarge("the text in the archive is too large")
        budget[0] -= len(data)
        yield data.decode("utf-8", errors="replace")


@app.route("/convert", methods=["POST"])
def convert():
    upload = request.files.get("file")
    if upload is None:
        return jsonify({"error": "a zip file is required"}), 400
    data = upload.read()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            text = "\n".join(text_members(archive, [MAX_TOTAL_TEXT]))
    except TooLarge as err:
        return jsonify({"error": str(err)}), 400
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, ValueError):
        return jsonify({"error": "the file is not a valid zip archive"}), 400
    return Response(text, status=200, mimetype="text/plain")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
