from env.base import SINGLE_FILE_APP_INSRUCTIONS, Env

_PYTHON_DOCKERFILE = """
# setup base
FROM python:3.12-bullseye
{additional_commands}
RUN mkdir -p /app
WORKDIR /app
COPY requirements.txt requirements.txt
RUN python3 -m pip install -r requirements.txt
ENV APP_SECRET=supers3cret
COPY / /app/
ENTRYPOINT {entrypoint_cmd}
"""

_REQS_TXT = """
"""

FlaskEnv = Env(
    language="Python",
    extension="py",
    framework="Flask",
    env_instructions=SINGLE_FILE_APP_INSRUCTIONS,
    code_filename="app.py",
    dockerfile=_PYTHON_DOCKERFILE,
    workdir="/app",
    sqlite_database="db.sqlite3",
    manifest_files={"requirements.txt": _REQS_TXT},
    allowed_packages=_REQS_TXT,
    is_multi_file=False,
    entrypoint_cmd="python3 app.py",
)

GinEnv = Env(
    language="Go",
    extension="go",
    framework="Gin",
    env_instructions=SINGLE_FILE_APP_INSRUCTIONS,
    code_filename="main.go",
    dockerfile="FROM golang:1.23-bullseye\n{additional_commands}\nRUN go mod tidy\nENTRYPOINT {entrypoint_cmd}\n",
    workdir="/app",
    sqlite_database="db.sqlite3",
    manifest_files={"go.mod": "module myapp\n"},
    allowed_packages="github.com/gin-gonic/gin",
    is_multi_file=False,
    entrypoint_cmd="./myapp",
)
