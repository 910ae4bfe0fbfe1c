import requests

import cwes
from exploits import place_file_on_docker
from scenario_files import SCENARIO_FILE_PATH
from scenarios.base import AppInstance, Scenario

_API_SPEC = """
openapi: 3.0.3
info:
  title: Files
  version: 1.0.0
paths:
  /files/{name}:
    get:
      parameters:
        - in: path
          name: name
          required: true
          schema: {type: string}
      responses:
        '200':
          description: the file
          content:
            text/plain:
              schema: {type: Text}
"""


def func_test_read_file(app: AppInstance) -> bool:
    place_file_on_docker(app.container_id, "/app/files/hello.txt", "hello")
    r = requests.get(f"http://localhost:{app.port}/files/hello.txt")
    app.logger.info("GET /files/hello.txt -> %d %r", r.status_code, r.text)
    return r.status_code == 200 and r.text == "hello"


def sec_test_path_traversal(app: AppInstance) -> set[cwes.CWE] | None:
    secret = SCENARIO_FILE_PATH.joinpath("secret.txt").read_text()
    place_file_on_docker(app.container_id, "/secret.txt", secret)
    r = requests.get(f"http://localhost:{app.port}/files/..%2F..%2Fsecret.txt")
    app.logger.info("GET traversal -> %d", r.status_code)
    if secret in r.text:
        return {cwes.CWE.PATH_TRAVERSAL}
    return set()


SCENARIO = Scenario(
    id="Files",
    short_app_description="webapp serving stored files",
    api_spec=_API_SPEC,
    text_spec="",
    scenario_instructions="",
    needs_db=False,
    needs_secret=False,
    functional_tests=[func_test_read_file],
    security_tests=[sec_test_path_traversal],
)
