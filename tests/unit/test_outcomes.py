"""Outcome classification (outcomes.py): only the candidate's behaviour counts against it.

Faults are planted as code compiled under the file names of each harness layer, so the
traceback says "raised inside bdd/browser/shared.py" exactly as a real bug there would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from pytest_backendbench.errors import BootFailure, HarnessError
from pytest_backendbench.outcomes import PACKAGE_DIR, Origin, Outcome, classify, describe_failure, exception_origin

ORACLES = Path("/bench/oracles/notes")
SERVICE = "http://127.0.0.1:40001"
LAYERS = ("bdd/browser/shared.py", "db/checks/dbcheck.py", "db/providers/local_cluster.py", "collect/phases.py", "http/contract.py", "http/fixtures.py")


def raised_in(path: Path, body: str, **names: object) -> pytest.ExceptionInfo[BaseException]:
    """Run ``body`` (which raises) as if it were the code of ``path``."""
    source = "def planted():\n" + "".join(f"    {line}\n" for line in body.splitlines())
    namespace: dict[str, object] = dict(names)
    exec(compile(source, str(path), "exec"), namespace)  # noqa: S102 - a planted fault, on purpose
    with pytest.raises(BaseException) as excinfo:
        namespace["planted"]()  # type: ignore[operator]
    return excinfo


@pytest.mark.parametrize("layer", LAYERS)
def test_a_bare_assert_inside_any_harness_layer_is_an_error(layer: str) -> None:
    excinfo = raised_in(PACKAGE_DIR / layer, "assert False, 'planted'")
    assert exception_origin(excinfo, (ORACLES,)) is Origin.HARNESS
    assert classify(excinfo, (ORACLES,), SERVICE) is Outcome.ERROR


@pytest.mark.parametrize("layer", LAYERS)
def test_any_other_exception_inside_the_harness_is_an_error(layer: str) -> None:
    assert classify(raised_in(PACKAGE_DIR / layer, "{}['missing']"), (ORACLES,), SERVICE) is Outcome.ERROR


def test_a_library_failing_under_a_harness_call_is_an_error() -> None:
    """openapi-core or psycopg raising below our code: the innermost frame we know is ours."""
    library = raised_in(Path("/site-packages/openapi_core/validation.py"), "raise ValueError('spec broken')")
    harness_call = raised_in(PACKAGE_DIR / "http/contract.py", "lib()", lib=lambda: (_ for _ in ()).throw(library.value))
    assert classify(harness_call, (ORACLES,), SERVICE) is Outcome.ERROR
    import psycopg

    db = raised_in(PACKAGE_DIR / "db/checks/fixture.py", "raise psycopg.OperationalError('server closed the connection')", psycopg=psycopg)
    assert classify(db, (ORACLES,), SERVICE) is Outcome.ERROR


def test_the_oracles_own_assertions_count_against_the_candidate() -> None:
    assert classify(raised_in(ORACLES / "test_notes.py", "assert 500 == 201"), (ORACLES,), SERVICE) is Outcome.FAILED
    assert classify(raised_in(ORACLES / "test_notes.py", "{}['id']"), (ORACLES,), SERVICE) is Outcome.FAILED  # choked on the answer


def test_requests_to_the_service_fail_the_candidate_and_requests_elsewhere_are_errors() -> None:
    to_service = requests.ConnectionError("reset", request=requests.Request("GET", SERVICE + "/notes").prepare())
    to_mock = requests.HTTPError("500", request=requests.Request("POST", "http://127.0.0.1:40002/__mock__/reset").prepare())
    thrower = "raise exc"
    assert classify(raised_in(PACKAGE_DIR / "http/contract.py", thrower, exc=to_service), (ORACLES,), SERVICE) is Outcome.FAILED
    assert classify(raised_in(PACKAGE_DIR / "http/fixtures.py", thrower, exc=to_mock), (ORACLES,), SERVICE) is Outcome.ERROR


def test_explicit_verdicts_win_over_where_they_were_raised() -> None:
    assert classify(raised_in(PACKAGE_DIR / "runtime/process.py", "raise BootFailure('never listened')", BootFailure=BootFailure), (ORACLES,)) is Outcome.FAILED
    assert classify(raised_in(ORACLES / "test_notes.py", "raise HarnessError('x')", HarnessError=HarnessError), (ORACLES,)) is Outcome.ERROR
    assert classify(raised_in(ORACLES / "test_notes.py", "undefined_name"), (ORACLES,)) is Outcome.ERROR  # a broken oracle


def test_a_harness_error_keeps_the_traceback_of_its_cause() -> None:
    try:
        try:
            {}["missing"]
        except KeyError as err:
            raise HarnessError("could not read the statement log") from err
    except HarnessError as error:
        text = describe_failure(error)
    assert text.startswith("[harness error, not the candidate's fault] could not read the statement log")
    assert "caused by:" in text and "KeyError: 'missing'" in text and "test_outcomes.py" in text


# --- oracle support code in the package (http/api.py) ------------------------------------------


class _Answer(requests.Response):
    """A real Response object with a status and a body, as the service would have answered."""

    def __init__(self, status: int, body: bytes, method: str = "POST", path: str = "/notes") -> None:
        super().__init__()
        self.status_code = status
        self._content = body
        self.request = requests.Request(method, SERVICE + path).prepare()


def _raised(call: object) -> pytest.ExceptionInfo[BaseException]:
    with pytest.raises(BaseException) as excinfo:
        call()  # type: ignore[operator]
    return excinfo


def test_assertions_of_the_packages_oracle_helpers_count_against_the_candidate() -> None:
    from pytest_backendbench.http.api import Api

    api = Api(requests.Session())
    wrong_status = _raised(lambda: api.error(_Answer(500, b"{}"), 404, "not_found", "read a deleted note"))
    assert exception_origin(wrong_status, (ORACLES,)) is Origin.ORACLE_SUPPORT
    assert classify(wrong_status, (ORACLES,), SERVICE) is Outcome.FAILED
    setup_failed = _raised(lambda: api.ok(_Answer(500, b"boom"), 201, "create a note"))  # pytest.fail inside the package
    assert isinstance(setup_failed.value, pytest.fail.Exception)
    assert classify(setup_failed, (ORACLES,), SERVICE) is Outcome.FAILED
    problems = _raised(lambda: api.assert_no_problems([None, "a problem"], "validation"))
    assert classify(problems, (ORACLES,), SERVICE) is Outcome.FAILED


def test_only_assertions_of_oracle_support_code_are_the_candidates_other_bugs_there_stay_errors() -> None:
    flagged = {"__oracle_support__": True}
    assert classify(raised_in(PACKAGE_DIR / "http/api.py", "assert 500 == 201", **flagged), (ORACLES,), SERVICE) is Outcome.FAILED
    assert classify(raised_in(PACKAGE_DIR / "http/api.py", "{}['id']", **flagged), (ORACLES,), SERVICE) is Outcome.ERROR
    # the same assertion in a package module that does not declare itself oracle support is ours
    assert classify(raised_in(PACKAGE_DIR / "http/checks.py", "assert 500 == 201"), (ORACLES,), SERVICE) is Outcome.ERROR


def test_validation_problem_accepts_every_reading_and_names_what_is_wrong() -> None:
    from pytest_backendbench.http.api import Api

    api = Api(requests.Session())
    body = b'{"error": "validation_error", "fields": ["title", "due"]}'
    assert api.validation_problem(_Answer(422, body), ["due", "title"], "create") is None
    assert api.validation_problem(_Answer(422, body), None, "create") is None
    assert api.validation_problem(_Answer(422, body), ["title"], "create", also=("due",)) is None
    assert api.validation_problem(_Answer(422, body), ["title"], "create") == "create: 422 should list fields ['title'], got ['title', 'due']"
    assert api.validation_problem(_Answer(400, b"{}"), ["title"], "create") == "create: expected 422, got POST /notes -> 400 {}"
    assert api.validation_problem(_Answer(422, b'{"error": "validation_error"}'), None, "create") == "create: a 422 body needs a 'fields' list, got None"
