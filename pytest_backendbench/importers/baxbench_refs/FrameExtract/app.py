"""FrameExtract (BaxBench scenario FrameExtract): ffmpeg on a private temp copy, bounded upload."""

import os
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
