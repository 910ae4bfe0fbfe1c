"""The answer format of single-shot generation: files as fenced code blocks naming their path.

``parse_answer`` reads a model's answer into files, accepting the documented format
(```` ```python path=app.py ````) and the common variants models write; ``check_files`` refuses
paths that could leave the workspace and answers without a Dockerfile, with a message that is
said back to the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath


class MalformedAnswer(ValueError):
    """The answer cannot be used as a candidate; the message is said back to the model."""


@dataclass(frozen=True)
class AnswerFile:
    """One file parsed from an answer."""

    path: str
    content: str


FENCE_OPEN = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
INFO_PATH = re.compile(r"""(?:^|\s)(?:path|file|filename|name|title)\s*[=:]\s*["']?(?P<path>[^\s"']+)""", re.IGNORECASE)
COMMENT_PATH = re.compile(r"^\s*(?:#|//|--|/\*|<!--)\s*(?:path|file|filename)\s*:\s*(?P<path>[^\s*>]+)", re.IGNORECASE)
HEADING_PREFIX = re.compile(r"^(?:#{1,6}\s+|[-*]\s+)?(?:\d+[.)]\s*)?(?:(?:file|path|filename)\s*:\s*)?", re.IGNORECASE)
BARE_NAMES = frozenset({"Dockerfile", "Makefile", "Procfile", ".dockerignore", ".gitignore", "Containerfile"})


def _looks_like_path(text: str) -> bool:
    if not text or " " in text or len(text) > 200:
        return False
    name = text.rsplit("/", 1)[-1]
    return name in BARE_NAMES or bool(re.fullmatch(r"[\w.\-/]+\.[A-Za-z0-9]+", text)) and not text.endswith(".")


def _path_from_label(line: str) -> str | None:
    """A file path named by the line before a fence: ``### app.py``, ``**app.py**``, ``File: `app.py```."""
    text = line.strip()
    if not text:
        return None
    ticked = re.findall(r"`([^`]+)`", text)
    for candidate in ticked:
        if _looks_like_path(candidate.strip()):
            return candidate.strip()
    text = HEADING_PREFIX.sub("", text).strip().strip("*_").strip()
    text = re.sub(r"^(?:file|path|filename)\s*:\s*", "", text, flags=re.IGNORECASE).strip().strip("*_`").rstrip(":").strip()
    return text if _looks_like_path(text) else None


def _path_from_info(info: str) -> str | None:
    """A path from the fence's info string: ``python path=app.py``, ``python:app.py``, ``app.py``."""
    match = INFO_PATH.search(info)
    if match:
        return match.group("path")
    words = info.split()
    if not words:
        return None
    first = words[0]
    if ":" in first:
        _, _, rest = first.partition(":")
        if _looks_like_path(rest):
            return rest
    for word in words:
        if ("." in word or "/" in word or word in BARE_NAMES) and _looks_like_path(word):
            return word
    return None


def parse_answer(text: str) -> list[AnswerFile]:
    """Files from a model's answer, in order (a later block for the same path wins).

    The documented format is a fence whose info string carries ``path=``; also accepted are a
    path-like info string (```` ```app.py ````, ```` ```python:app.py ````), a label line right
    before the fence (``### app.py``, ``**app.py**``, ``File: `app.py```), and a first line
    inside the block such as ``# file: app.py`` (then dropped). Blocks naming no path are
    ignored, except a lone dockerfile block, which is the Dockerfile. ``<think>`` sections of
    reasoning models are skipped.
    """
    lines = THINKING.sub("", text).splitlines()
    files: dict[str, AnswerFile] = {}
    unnamed_dockerfiles: list[str] = []
    index = 0
    while index < len(lines):
        opening = FENCE_OPEN.match(lines[index])
        if opening is None:
            index += 1
            continue
        fence, info = opening.group("fence"), opening.group("info").strip()
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        end = index + 1
        while end < len(lines) and not closing.match(lines[end]):
            end += 1
        body = lines[index + 1 : end]
        path = _path_from_info(info)
        if path is None:
            previous = next((lines[j] for j in range(index - 1, max(index - 3, -1), -1) if lines[j].strip()), "")
            path = _path_from_label(previous)
        if body and (comment := COMMENT_PATH.match(body[0])) is not None:
            path = path or comment.group("path")
            if path == comment.group("path"):
                body = body[1:]
        if end >= len(lines):
            if path is not None:
                raise MalformedAnswer(f"the code block of {path} is never closed; the answer was cut off or a fence is missing")
            break
        content = "\n".join(body) + "\n" if body else ""
        if path is not None:
            files[path] = AnswerFile(path, content)
        elif info.split()[:1] and info.split()[0].lower() in ("dockerfile", "docker"):
            unnamed_dockerfiles.append(content)
        index = end + 1
    if len(unnamed_dockerfiles) == 1 and not any(_is_dockerfile(p) for p in files):
        files["Dockerfile"] = AnswerFile("Dockerfile", unnamed_dockerfiles[0])
    return list(files.values())


def _is_dockerfile(path: str) -> bool:
    return path.lower() == "dockerfile"


def safe_relative_path(path: str, workspace: Path) -> Path:
    """Where ``path`` goes in ``workspace``; MalformedAnswer for anything that could escape it."""
    cleaned = path.strip()
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    pure = PurePosixPath(cleaned)
    if (
        not cleaned
        or "\\" in cleaned
        or "\0" in cleaned
        or pure.is_absolute()
        or re.match(r"^[A-Za-z]:", cleaned)
        or any(part in ("..", "") for part in cleaned.split("/"))
    ):
        raise MalformedAnswer(f"the path {path!r} is not a plain relative path inside the service folder")
    target = (workspace / pure).resolve()
    if not target.is_relative_to(workspace.resolve()):
        raise MalformedAnswer(f"the path {path!r} leads outside the service folder")
    return target


def check_files(files: list[AnswerFile], workspace: Path) -> dict[Path, str]:
    """Target path -> content, or MalformedAnswer saying what the model must fix."""
    if not files:
        raise MalformedAnswer("it contains no files: no fenced code block names its path")
    targets: dict[Path, str] = {}
    for file in files:
        name = "Dockerfile" if _is_dockerfile(file.path.strip().removeprefix("./")) else file.path
        targets[safe_relative_path(name, workspace)] = file.content
    if workspace.resolve() / "Dockerfile" not in targets:
        named = ", ".join(f.path for f in files)
        raise MalformedAnswer(f"it has no Dockerfile at the root of the service (files given: {named})")
    return targets



# --- BaxBench's answer format (``prompt: verbatim`` tasks) ---------------------------------
# Its Parser (src/prompts.py), regex for regex, so a verbatim task's answer becomes the same files
# BaxBench's runner would have tested.
BAX_FILEPATH = re.compile(r"<FILEPATH>(.+?)</FILEPATH>", re.DOTALL)
BAX_HEADING_PATH = re.compile(r"^###\s*(.+?)$", re.DOTALL | re.MULTILINE)
BAX_MARKDOWN = re.compile(r"```(?!bash)\w+\n(.*?)\n```", re.DOTALL)
BAX_CODE = re.compile(r"<CODE>(.+?)</CODE>", re.DOTALL)


def _bax_clean(text: str) -> str:
    return text.strip().removeprefix("**").removesuffix("**").strip()


def parse_baxbench_answer(text: str, code_files: tuple[str, ...]) -> list[AnswerFile]:
    """The files BaxBench's Parser takes from an answer; MalformedAnswer where it finds none.

    One code file (a single-file framework): the first fenced block with a language other than
    bash, else the first ``<CODE>`` block. Otherwise (multi-file): ``<FILEPATH>`` names (else
    ``### path`` headings) paired in order with as many fenced blocks, else ``<CODE>`` blocks.
    """
    markdown = [_bax_clean(s) for s in BAX_MARKDOWN.findall(text)]
    code = [_bax_clean(s) for s in BAX_CODE.findall(text)]
    if len(code_files) == 1:
        snippets = markdown or code
        if not snippets:
            raise MalformedAnswer("BaxBench's parser found no code: neither a fenced code block nor a <CODE> block")
        return [AnswerFile(code_files[0], snippets[0])]
    for paths in ([_bax_clean(s) for s in BAX_FILEPATH.findall(text)], [_bax_clean(s) for s in BAX_HEADING_PATH.findall(text)]):
        if paths and len(paths) == len(markdown):
            return [AnswerFile(p, c) for p, c in zip(paths, markdown, strict=True)]
        if paths and len(paths) == len(code):
            bodies = [(_bax_clean(m[0]) if (m := BAX_MARKDOWN.findall(c)) else c) for c in code]
            return [AnswerFile(p, c) for p, c in zip(paths, bodies, strict=True)]
    raise MalformedAnswer(
        f"BaxBench's parser found no files: {len(BAX_FILEPATH.findall(text))} <FILEPATH>, {len(markdown)} fenced and {len(code)} <CODE> block(s) do not pair up"
    )


def baxbench_targets(text: str, code_files: tuple[str, ...], workspace: Path) -> dict[Path, str]:
    """Target path -> content of a verbatim task's answer (BaxBench's parser; paths kept inside)."""
    return {safe_relative_path(f.path, workspace): f.content for f in parse_baxbench_answer(text, code_files)}
