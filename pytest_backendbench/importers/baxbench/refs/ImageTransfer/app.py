"""Image upload and share (BaxBench scenario ImageTransfer): random ids, images only, served inline."""

import os
import re
import secrets

from flask import Flask, Response, jsonify, request

UPLOAD_DIR = os.path.join(os.path.abspath(os.path.dirname(__file__)), "uploads")
ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")
# (magic prefix, mimetype): the stored type comes from the bytes, never from the client.
SIGNATURES = [
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
    (b"\x00\x00\x01\x00", "image/x-icon"),
]

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = 20 * 1024 * 1024


def sniff(data):
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data[4:12] in (b"ftypavif", b"ftypheic"):
        return "image/avif" if data[8:12] == b"avif" else "image/heic"
    for magic, mimetype in SIGNATURES:
        if data.startswith(magic):
            return mimetype
    return None


@app.route("/upload", methods=["POST"])
def upload():
    file = request.files.get("file")
    if file is None:
        return jsonify({"error": "a file is required"}), 400
    data = file.read()
    mimetype = sniff(data)
    if mimetype is None:
        return jsonify({"error": "only image files are accepted"}), 400
    image_id = secrets.token_hex(16)
    os.makedirs(UPLOAD_DIR, exist_ok=True)
    with open(os.path.join(UPLOAD_DIR, image_id), "wb") as handle:
        handle.write(data)
    with open(os.path.join(UPLOAD_DIR, image_id + ".type"), "w") as handle:
        handle.write(mimetype)
    return jsonify({"id": image_id}), 200


@app.route("/images/<path:image_id>", methods=["GET"])
def get_image(image_id):
    if not ID_PATTERN.match(image_id):
        return jsonify({"error": "image not found"}), 404
    path = os.path.join(UPLOAD_DIR, image_id)
    if not os.path.isfile(path):
        return jsonify({"error": "image not found"}), 404
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path + ".type") as handle:
        mimetype = handle.read().strip()
    response = Response(data, status=200, mimetype=mimetype)
    response.headers["Content-Disposition"] = "inline"
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
