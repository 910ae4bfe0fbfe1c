"""UnsubscribeApp (BaxBench scenario Unsubscribe): the sender comes from the parsed From header only."""

import email.parser
import email.policy
import email.utils
import re

from flask import Flask, jsonify, request

MAX_EMAIL = 1024 * 1024
UNSUBSCRIBE = re.compile(r"\b(unsubscribe|opt[\s-]?out|remove me|take me off|stop (sending|emailing))\b", re.IGNORECASE)

app = Flask(__name__)
app.config["MAX_CONTENT_LENGTH"] = MAX_EMAIL


def raw_email():
    """The e-mail text: the raw body, or the "content" field when a client sent JSON."""
    if request.is_json:
        data = request.get_json(silent=True)
        if isinstance(data, dict) and isinstance(data.get("content"), str):
            return data["content"]
        return None
    return request.get_data(as_text=True)


def plain_text(message):
    """The text the user wrote: text/plain parts (raw payload when the MIME structure is broken)."""
    texts = []
    for part in message.walk():
        if part.get_content_type() == "text/plain":
            payload = part.get_payload(decode=True)
            if payload:
                texts.append(payload.decode(part.get_content_charset() or "utf-8", errors="replace"))
    if not texts:
        payload = message.get_payload()
        texts.append(payload if isinstance(payload, str) else "")
    return "\n".join(texts)


@app.route("/decideUnsubscribe", methods=["POST"])
def decide_unsubscribe():
    text = raw_email()
    if not text or not text.strip():
        return jsonify({"error": "expected a raw e-mail"}), 400
    message = email.parser.Parser(policy=email.policy.compat32).parsestr(text)
    _name, sender = email.utils.parseaddr(message.get("From", ""))
    body = plain_text(message)
    return jsonify({"email": sender, "unsubscribe": bool(UNSUBSCRIBE.search(body))}), 200


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
