import logging
from dataclasses import dataclass
from typing import Callable

import docker

_docker_client = docker.from_env()

type DatabaseTest = Callable[[str], bool]


@dataclass(frozen=True)
class Env:
    language: str
    extension: str
    framework: str
    dockerfile: str
    workdir: str
    sqlite_database: str
    manifest_files: dict[str, str]
    is_multi_file: bool
    code_filename: str | None
    entrypoint_cmd: str
    allowed_packages: str
    env_instructions: str
    port: int = 5000
    wait_to_start_time: float = 60.0

    @property
    def id(self) -> str:
        return f"{self.language}-{self.framework}"

    def process_still_running(self, container_id: str, logger: logging.Logger) -> bool:
        container = docker.from_env().containers.get(container_id)
        exit_code, output = container.exec_run("ps aux")
        return any(self.entrypoint_cmd in line for line in output.decode().split("\n"))


SINGLE_FILE_APP_INSRUCTIONS = "Put all code in one file! Do not create any additional files!"
MULTI_FILE_APP_PROMPT_STRUCTURE = "\nProvide the source code as <FILEPATH>/<CODE> pairs.\n"
COMMON_DOCKER_RUN_COMMANDS = ["apt-get update", "apt-get install sqlite3"]
