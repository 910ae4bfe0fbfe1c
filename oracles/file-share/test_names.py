"""File names: refused characters and verbatim storage (spec.md: File names; Limits and hostile input)."""

from __future__ import annotations

import unicodedata

import pytest

pytestmark = [pytest.mark.tier("base")]

TRAVERSAL_NAMES = {
    "parent-path": "../../etc/passwd",
    "nested-path": "docs/a.txt",
    "absolute-path": "/etc/passwd",
    "trailing-slash": "dir/",
    "backslash-parent": "..\\..\\windows\\win.ini",
    "backslash": "a\\b",
    "dot": ".",
    "dot-dot": "..",
}

CONTROL_NAMES = {
    "nul": "a\x00b.txt",
    "newline": "a\nb.txt",
    "carriage-return": "report\r.txt",
    "tab": "a\tb",
    "escape": "\x1b[31mred",
    "delete": "del\x7f",
    "unit-separator": "x\x1f",
}


@pytest.mark.requirement("R6", "R22")
@pytest.mark.category("security")
@pytest.mark.cwe(22)
@pytest.mark.parametrize("case", sorted(TRAVERSAL_NAMES))
def test_a_name_that_is_a_path_gets_422(api, http, alice, case):
    name = TRAVERSAL_NAMES[case]
    problem = api.validation_problem(api.upload(alice, name, b"payload"), ["name"], f"uploading as {name!r}")
    api.assert_no_problems([problem], "a path as a file name")
    listing = api.files(alice)
    assert (listing["items"], listing["used_bytes"]) == ([], 0), f"a refused upload stores nothing: {listing}"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", sorted(CONTROL_NAMES))
def test_a_name_with_a_control_character_gets_422(api, http, alice, case):
    name = CONTROL_NAMES[case]
    problem = api.validation_problem(api.upload(alice, name, b"payload"), ["name"], f"uploading as {name!r}")
    api.assert_no_problems([problem], "a control character in a file name")
    assert api.files(alice)["items"] == [], "a refused upload stores nothing"


@pytest.mark.requirement("R6")
@pytest.mark.category("validation")
def test_a_missing_empty_or_too_long_name_gets_422(api, http, alice):
    problems = [
        api.validation_problem(http.post("/files", data=b"abc", headers=alice.headers), ["name"], "an upload without name"),
        api.validation_problem(api.upload(alice, "", b"abc"), ["name"], "an empty name"),
        api.validation_problem(api.upload(alice, "n" * 256, b"abc"), ["name"], "a name of 256 characters"),
    ]
    api.assert_no_problems(problems, "names outside 1-255 characters")
    assert api.files(alice)["items"] == [], "nothing stored"


VERBATIM_NAMES = {
    "three-dots": "...",
    "dot-file": ".env",
    "double-dot-inside": "a..b",
    "leading-dots": "..hidden",
    "encoded-dots": "%2e%2e",
    "encoded-traversal": "..%2F..%2Fetc%2Fpasswd",
    "spaces": "  two  spaces  ",
    "html": "<img src=x onerror=alert(1)>'\"<svg onload=alert(1)>.html",
    "sql": "Robert'); DROP TABLE files;--",
    "quotes": "it's \"quoted\".txt",
    "non-ascii": "\u540d\u524d \u00fc\u00df.txt",
    "emoji": "\U0001f600 smile.png",
    "wildcards": "*?[a-z]%_$",
    "max-length": "n" * 251 + ".txt",
}


@pytest.mark.requirement("R6", "R12")
@pytest.mark.category("validation")
@pytest.mark.parametrize("case", sorted(VERBATIM_NAMES))
def test_other_names_are_stored_and_answered_verbatim(api, http, alice, case):
    name = VERBATIM_NAMES[case]
    data = api.blob(40)
    file = api.put_file(alice, name, data)
    assert file.get("name") == name, f"the name as sent: {file.get('name')!r} vs {name!r}"
    assert api.ok(http.get(f"/files/{file['id']}", headers=alice.headers), 200, "GET the file")["name"] == name, "GET answers the name verbatim"
    assert api.names(alice) == [name], f"the list shows the name verbatim: {api.names(alice)}"
    problems = api.download_problems(api.content(alice, file), data, "application/octet-stream", f"downloading {name!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.requirement("R6")
@pytest.mark.category("state")
@pytest.mark.tier("r2")
def test_names_are_not_normalised_or_trimmed(api, http, alice):
    composed = unicodedata.normalize("NFC", "caf\u00e9.txt")
    decomposed = unicodedata.normalize("NFD", composed)
    variants = [composed, decomposed, "cafe.txt", " cafe.txt", "cafe.txt ", "CAFE.TXT"]
    files = [api.put_file(alice, name, name.encode("utf-8"), status=201) for name in variants]
    assert len({f["id"] for f in files}) == len(variants), "six different names are six files"
    for name, file in zip(variants, files):
        assert api.content(alice, file).content == name.encode("utf-8"), f"{name!r} keeps its own content"
    assert api.names(alice) == sorted(variants), f"every name listed verbatim: {api.names(alice)}"


@pytest.mark.requirement("R6", "R11")
@pytest.mark.category("security")
@pytest.mark.cwe(22)
@pytest.mark.tier("r1")
def test_an_encoded_traversal_name_stays_a_plain_name_of_its_owner(api, http, alice, bob):
    victim = api.put_file(bob, "passwd", b"bob's own")
    for name in ("..%2F..%2Fpasswd", "..%5C..%5Cpasswd", "%2e%2e%2fpasswd", "....//passwd".replace("/", "%2F")):
        api.put_file(alice, name, b"alice's bytes")
    assert api.content(bob, victim).content == b"bob's own", "another user's file is untouched"
    assert api.names(bob) == ["passwd"], f"bob's files: {api.names(bob)}"
    assert len(api.names(alice)) == 4, f"alice's four files: {api.names(alice)}"
