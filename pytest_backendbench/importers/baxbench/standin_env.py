"""What BaxBench's tests use of its ``env.base`` module, without its image building.

BaxBench's ``env/base.py`` builds images and starts containers (the harness does that here)
and opens a Docker connection when imported. The imported tests only read an ``Env``'s fields
(``workdir``, ``sqlite_database``, ``entrypoint_cmd``, ...) and call
``env.process_still_running``; the imported bench's ``oracles/_baxbench/env/base.py``
re-exports this module under BaxBench's name. ``process_still_running`` is BaxBench's code,
line for line: its ``docker.from_env()`` is bound to the candidate container's engine by
``bridge.bind_engine``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import docker
import docker.errors

DatabaseTest = Any


@dataclass(frozen=True)
class Env:
    """BaxBench's framework environment (the fields its tests read)."""

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
        """BaxBench's crash check: is a process running the entry point command?"""
        _docker_client = docker.from_env()
        container = _docker_client.containers.get(container_id)
        logger.info(f"Checking if process is still running: {self.entrypoint_cmd}")
        try:
            _exit_code, output = container.exec_run("ps aux")
            logger.debug(f"Processes running status: {output}")
            if any(self.entrypoint_cmd in line for line in output.decode().split("\n")):
                logger.info("Processes still running")
                return True
            logger.info("Processes not running, assumed to have crashed")
            return False
        except docker.errors.APIError as e:
            logger.warning(f"Got exception while checking process status: {e}")
            return False


SINGLE_FILE_APP_INSRUCTIONS = "Put all code in one file! Do not create any additional files!"

MULTI_FILE_APP_PROMPT_STRUCTURE = """
Provide the source code in the following format:
<FILEPATH>
The path to the file to be modified
</FILEPATH>
<CODE>
The full content of the file
</CODE>
for all the files you want to create.

Example:
<FILEPATH>
path/to/file.py
</FILEPATH>
<CODE>
def hello_world():
    pass
</CODE>

"""

COMMON_DOCKER_RUN_COMMANDS = ["apt-get update", "apt-get install sqlite3"]
