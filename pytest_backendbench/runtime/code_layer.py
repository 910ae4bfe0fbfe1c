"""One environment image per task Dockerfile, the candidate's code copied into each container.

A task that supplies its Dockerfile (BaxBench's imported tasks) used to be built once per
candidate, though only its last step differs: ``COPY / /app/`` of the candidate's code. When the
Dockerfile ends that way — the build context copied whole, with nothing after it but metadata
(``ENV``, ``ENTRYPOINT``, ``CMD``, ``EXPOSE``, ``WORKDIR``, ``USER``, ``LABEL``, ``STOPSIGNAL``)
and nothing before it copying more than the task's ``build_files`` — the harness builds the
Dockerfile without that step once, as an environment image every candidate of every task with
the same Dockerfile and build files shares, and puts the files the ``COPY`` would have copied
(the same build context: code, build files, Dockerfile) into each container before it starts,
owned by root with their modes, as ``COPY`` leaves them. Any other Dockerfile is built per
candidate as before.
"""

from __future__ import annotations

import hashlib
import io
import posixpath
import tarfile
from dataclasses import dataclass
from pathlib import Path

METADATA_INSTRUCTIONS = {"ENV", "ENTRYPOINT", "CMD", "EXPOSE", "WORKDIR", "USER", "LABEL", "STOPSIGNAL"}
WHOLE_CONTEXT = {"/", ".", "./"}


@dataclass(frozen=True)
class CodeLayerSplit:
    """A task Dockerfile without its code ``COPY``, and where that ``COPY`` put the code."""

    environment_dockerfile: str
    destination: str


def _instructions(text: str) -> list[tuple[str, str, list[str]]]:
    """(keyword, arguments, source lines) per instruction; comments and blank lines kept with the next one."""
    out: list[tuple[str, str, list[str]]] = []
    pending: list[str] = []
    joined = ""
    for line in text.splitlines():
        pending.append(line)
        stripped = line.strip()
        if not joined and (not stripped or stripped.startswith("#")):
            continue
        joined += stripped[:-1] + " " if stripped.endswith("\\") else stripped
        if stripped.endswith("\\"):
            continue
        keyword, _, args = joined.partition(" ")
        out.append((keyword.upper(), args.strip(), pending))
        pending, joined = [], ""
    if pending:
        out.append(("", "", pending))
    return out


def split_code_copy(dockerfile: str, build_files: tuple[str, ...]) -> CodeLayerSplit | None:
    """The environment part of ``dockerfile`` and the code's destination; None when the
    Dockerfile does not end in a whole-context ``COPY`` the harness can stand in for."""
    steps = _instructions(dockerfile)
    code_index = None
    for index in range(len(steps) - 1, -1, -1):
        keyword, args, _ = steps[index]
        if keyword in ("COPY", "ADD"):
            parts = args.split()
            if keyword == "COPY" and len(parts) == 2 and parts[0] in WHOLE_CONTEXT and not parts[0].startswith("--"):
                code_index = index
            break
        if keyword and keyword not in METADATA_INSTRUCTIONS:
            return None
    if code_index is None:
        return None
    allowed = {name.strip("/") for name in build_files} | {"Dockerfile"}
    workdir = "/"
    for keyword, args, _ in steps[:code_index]:
        if keyword == "ADD" or (keyword == "COPY" and (args.startswith("--") or any(src.strip("./") not in allowed for src in args.split()[:-1]))):
            return None
        if keyword == "WORKDIR":
            workdir = posixpath.join(workdir, args.strip())
    destination = posixpath.normpath(posixpath.join(workdir, steps[code_index][1].split()[1]))
    lines = [line for index, (_, _, source) in enumerate(steps) if index != code_index for line in source]
    return CodeLayerSplit("\n".join(lines) + "\n", destination)


def environment_tag(repository: str, split: CodeLayerSplit, build_files: dict[str, bytes], base_image: str | None) -> str:
    """The environment image's tag: the hash of its Dockerfile, its build files and the base image argument."""
    digest = hashlib.sha256(split.environment_dockerfile.encode())
    for name, data in sorted(build_files.items()):
        digest.update(b"\0" + name.encode() + b"\0" + hashlib.sha256(data).digest())
    digest.update(b"\0" + (base_image or "").encode())
    return f"{repository}/environment:{digest.hexdigest()[:16]}"


def code_archive(context: Path, destination: str) -> bytes:
    """The files of ``context`` as a tar to extract at ``/``, under ``destination``, owned by root."""

    def as_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        return info

    buffer = io.BytesIO()
    prefix = destination.strip("/")
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in sorted(context.rglob("*")):
            name = posixpath.join(prefix, path.relative_to(context).as_posix())
            tar.add(path, arcname=name, recursive=False, filter=as_root)
    return buffer.getvalue()

