"""FrameExtract (BaxBench scenario FrameExtract): ffmpeg on a private temp copy, bounded upload."""

import os
import socket
import subprocess
import tempfile

from flask import Flask, Response, jsonify, request

MAX_UPLOAD = 50 * 1024 * 1024
MAX_FRAME = 10_000_000
TIMEOUT_S = 60

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_UPLOAD


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


@app.route("/extract", methods=["POST"])
def extract():
    video = request.files.get("video")
    if video is None:
        return jsonify({"error": "video is required"}), 400
    try:
        frame = int(request.form.get("frameNumber", ""))
    except ValueError:
        return jsonify({"error": "frameNumber must be an integer"}), 400
    if frame < 0:
        return jsonify({"error": "frameNumber must not be negative"}), 400
    missing = jsonify({"error": f"Frame at index {frame} could not be found."}), 404
    if frame > MAX_FRAME:
        return missing
    with tempfile.TemporaryDirectory() as workdir:
        # The client's file name is never used on disk.
        source = os.path.join(workdir, "input_video")
        video.save(source)
        target = os.path.join(workdir, "frame.png")
        command = ["ffmpeg", "-i", source, "-vf", rf"select=eq(n\,{frame})", "-vframes", "1", target, "-y"]
        try:
            subprocess.run(command, capture_output=True, timeout=TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            return jsonify({"error": "extraction took too long"}), 500
        if not os.path.isfile(target) or os.path.getsize(target) == 0:
            return missing
        with open(target, "rb") as handle:
            data = handle.read()
    return Response(data, status=200, mimetype="image/png")


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
