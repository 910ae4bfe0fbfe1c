"""Secret-derived fields in JSON answers: what a spec's "never returns a password" forbids.

A spec that says no response carries a password *or anything derived from it* is broken by a
user object that carries ``password_hash``, ``salt`` or a ``$2b$...`` string, whatever the
field is called. ``secret_findings`` walks any decoded JSON value and returns what it found
(never raising: a check choking on a candidate's answer inside the package would count as the
harness's error); ``response_secret_findings`` does the same for a ``requests`` answer and
is the shape an ``http`` response check takes (see ``http/fixtures.py``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import requests

PASSWORD_WORDS = re.compile(r"^(hashed|encrypted)?(pw|pwd|pass|passwd|password|passphrase)(hash|salt|digest)?$")
"""One word of a key name that says "password" (``password``, ``pwd``, ``hashedpassword``, ``pwhash``)."""


USER_SECRET_WORDS = re.compile(r"^(hash|hashed|salt|digest|secret)$")
"""Words that, in an answer about a user (an account), can only mean something made of the password."""


def secret_key(key: str, *, user_object: bool = False) -> bool:
    """Whether a key's name says it holds a password or something made of one (``password_hash``, ``pwdSalt``).

    The name is split into words (``_``, ``-``, camelCase) so that ``passengers`` or ``compass``
    are not taken for one. A bare ``salt``, ``hash`` or ``secret`` is not reported by name: a
    spec may use such words for other things (a flag's bucketing hash, an API key's secret);
    their values are still looked at. In an answer about a user (``user_object``), where a spec
    gives none of them another meaning, ``hash``, ``salt``, ``digest`` and ``secret`` are reported too
    (``_hash``, ``salt``).
    """
    words = [word for word in re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower().replace("-", "_").split("_") if word]
    return any(PASSWORD_WORDS.match(word) or (user_object and USER_SECRET_WORDS.match(word)) for word in words)


HASH_VALUE = re.compile(
    r"(\$(2[abxy]?|argon2(id|i|d)|pbkdf2[-_a-z0-9]*|scrypt|[1356y]|gy|7)\$"  # modular crypt format
    r"|^(pbkdf2|scrypt|argon2|bcrypt|sha1|sha256|sha512|md5)[:$]"  # Django/werkzeug style prefixes
    r"|^[0-9a-f]{64,128}:[0-9a-f]{8,}$|^[0-9a-f]{8,}:[0-9a-f]{64,128}$)",  # hex salt:digest pairs
    re.IGNORECASE,
)
"""Values shaped like a stored password hash, whatever key holds them."""


def _digests(password: str) -> dict[str, str]:
    raw = password.encode()
    found = {"the password itself": password, "its base64 form": base64.b64encode(raw).decode()}
    for name in ("md5", "sha1", "sha256", "sha512"):
        digest = hashlib.new(name, raw)
        found[f"its {name} hex digest"] = digest.hexdigest()
        found[f"its {name} base64 digest"] = base64.b64encode(digest.digest()).decode()
    return found


def _holds_text(value: Any) -> bool:
    """Whether a value could carry a password or hash: a non-empty string, or a container holding one
    (``"password_set": true`` or ``"password_changed_at": null`` reveal nothing)."""
    if isinstance(value, str):
        return bool(value)
    if isinstance(value, dict):
        return any(_holds_text(sub) for sub in value.values())
    if isinstance(value, list):
        return any(_holds_text(sub) for sub in value)
    return False


def secret_findings(value: Any, passwords: Iterable[str] = (), *, allowed_keys: Iterable[str] = (), where: str = "$",
                    user_object: bool = False) -> list[str]:
    """Every secret-derived field in ``value`` (decoded JSON), as ``<path>: <why>`` lines.

    A key is reported when its name says password (``password_hash``, ``pwd_salt``;
    ``allowed_keys`` lists the names a spec documents for another meaning, compared
    case-insensitively) and its value is not empty; a string value is reported when it is shaped like a stored password
    hash or, for each of ``passwords``, is that password or an unsalted digest or base64 of it
    (inside a longer text only when it has six or more different characters: ``"ü" * 8`` is a
    password, and a name of a hundred ``ü`` does not reveal it).
    """
    allowed = {key.lower() for key in allowed_keys}
    forms = [(why, form) for password in passwords if password for why, form in _digests(password).items()]
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(where, value)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            for key, sub in node.items():
                sub_path = f"{path}.{key}"
                if isinstance(key, str) and key.lower() not in allowed and secret_key(key, user_object=user_object) and _holds_text(sub):
                    found.append(f"{sub_path}: a field named like a password or its hash ({str(sub)[:40]!r})")
                stack.append((sub_path, sub))
        elif isinstance(node, list):
            stack.extend((f"{path}[{index}]", sub) for index, sub in enumerate(node))
        elif isinstance(node, str):
            if HASH_VALUE.search(node):
                found.append(f"{path}: a value shaped like a stored password hash ({node[:40]!r})")
            found.extend(f"{path}: {why}" for why, form in forms if form == node or (form in node and len(set(form)) >= 6))
    return sorted(set(found))


def response_secret_findings(response: requests.Response, passwords: Iterable[str] = (), *, allowed_keys: Iterable[str] = (),
                             user_object: bool = False) -> list[str]:
    """``secret_findings`` of a JSON answer, each line prefixed with its request; [] for other bodies."""
    # whatever the Content-Type says: a JSON body mislabelled as text still shows the hash
    if (response.content or b"").lstrip()[:1] not in (b"{", b"["):
        return []
    try:
        body = response.json()
    except ValueError:
        return []
    request = response.request
    label = f"{request.method} {request.path_url} -> {response.status_code}" if request is not None else str(response.status_code)
    return [f"{label}: {line}" for line in secret_findings(body, passwords, allowed_keys=allowed_keys, user_object=user_object)]


def sent_passwords(request: requests.PreparedRequest | None) -> list[str]:
    """The values of password-named fields of a request's JSON body (a registration, a login)."""
    body = getattr(request, "body", None)
    if not body:
        return []
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return []
    if not isinstance(data, dict):
        return []
    return [value for key, value in data.items() if isinstance(key, str) and secret_key(key) and isinstance(value, str) and len(value) >= 8]


def secret_check(passwords: Callable[[], Iterable[str]] = tuple, *, allowed_keys: Iterable[str] = ()) -> Callable[[requests.Response], list[str]]:
    """A response check for the ``http`` fixture: secret-derived fields in every JSON answer.

    Every password sent in a request body through the session (registrations, logins, password
    changes) is remembered and looked for in every later answer, with ``passwords()`` (called
    for each answer) for those set up another way.
    """
    keys = tuple(allowed_keys)
    seen: dict[str, None] = {}

    def check(response: requests.Response) -> list[str]:
        seen.update(dict.fromkeys(sent_passwords(response.request)))
        return response_secret_findings(response, [*seen, *passwords()], allowed_keys=keys)

    check.__doc__ = "no password, nor a hash or digest of one, in any JSON answer"
    check.cwe = 200  # type: ignore[attr-defined]  # read by the http fixture: the CWE its findings are
    return check


def long_password() -> str:
    """A fresh 101-character password (most specs allow 8-128): long enough to differ after byte 72."""
    return "pw-" + uuid.uuid4().hex + "-" + "a" * 60 + "-tail"


PASSWORD_EDGES: dict[str, Callable[[str], str]] = {
    "differs-after-72-bytes": lambda p: p[:72] + ("B" if p[72] != "B" else "C") + p[73:],
    "first-72-bytes-only": lambda p: p[:72],
    "upper-cased": lambda p: p.upper(),
    "trailing-space": lambda p: p + " ",
    "leading-space": lambda p: " " + p,
    "last-character-dropped": lambda p: p[:-1],
}
"""Wrong passwords at the edges where hashing or comparing code goes wrong: bcrypt's 72-byte
truncation, case folding, trimming, prefix comparison. Each is wrong for ``long_password()``."""


def account_findings(http: requests.Session, register: dict[str, Any], login: dict[str, Any], *, me_path: str | None = "/me",
                     users_path: str = "/users", token_path: str = "/auth/token", register_headers: dict[str, str] | None = None) -> list[str]:
    """Register, log in, read the caller, register again and log in wrongly; what went wrong.

    Every answer about the user is looked at for the password and hashes of it (``secret_findings``,
    with ``user_object``: these answers are about the user);
    the statuses must be 201, 200, 200, 409 and 401. ``login`` must hold the right ``password``;
    ``register_headers`` authorise the registration where only an administrator creates users.
    """
    password = str(login.get("password", ""))
    found: list[str] = []
    steps: list[tuple[str, int, requests.Response]] = []

    def step(what: str, status: int, response: requests.Response) -> requests.Response:
        steps.append((what, status, response))
        return response

    step("register", 201, http.post(users_path, json=register, headers=register_headers))
    answer = step("log in", 200, http.post(token_path, json=login))
    try:
        token = answer.json().get("token", "") if answer.status_code == 200 else ""
    except (ValueError, AttributeError):
        token = ""
    if me_path is not None:  # a contract without a "who am I" path passes None
        step("read the caller", 200, http.get(me_path, headers={"Authorization": f"Bearer {token}"}))
    step("register the same username again", 409, http.post(users_path, json=register, headers=register_headers))
    step("log in with a wrong password", 401, http.post(token_path, json={**login, "password": password + "x"}))
    for what, status, response in steps:
        label = f"{what} ({response.request.method} {response.request.path_url})"
        if response.status_code != status:
            found.append(f"{label}: expected {status}, got {response.status_code} {response.text[:150]}")
        found.extend(f"{label}: {line}" for line in response_secret_findings(response, [password], user_object=True))
    return found
