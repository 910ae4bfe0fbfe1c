"""The agent sandbox against the real docker engine, and the process fallback.

Commands that would harm the machine (``kill -9 -1``) run only in the docker sandbox: the
process fallback isolates nothing, and its tests stick to harmless commands.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from docker import DockerClient

from pytest_backendbench.agents.sandbox import (
    DockerSandbox,
    ProcessSandbox,
    SandboxLimits,
    SandboxSpec,
    UnsandboxedAgentWarning,
    open_sandbox,
)
from pytest_backendbench.agents.workspace import CANDIDATE_FORMAT_FILE, REQUIREMENTS_FILE, prepare_workspace
from pytest_backendbench.errors import HarnessError, TaskFormatError
from pytest_backendbench.runtime.cleanup import count_session_objects, remove_session_objects
from pytest_backendbench.tasks import TaskCatalog, VisibleTask

from .conftest import BENCH

SMALL = SandboxLimits(memory="256m", cpus=1.0, pids=128, disk="64m", command_timeout_s=20, wall_s=300, output_bytes=64_000)


def spec_for(task: VisibleTask, session_id: str, agent_base_image: str, **changes: object) -> SandboxSpec:
    """A sandbox on the plain base image (fast; only bash is needed) with small limits."""
    values: dict[str, object] = {"image": agent_base_image, "limits": SMALL, "network": "none"}
    values.update(changes)
    return SandboxSpec(task=task, key=f"{task.id}@sample-1", session_id=session_id, **values)  # type: ignore[arg-type]


# -- the workspace -------------------------------------------------------------------------------


def test_workspace_holds_the_visible_task_and_nothing_of_its_oracle(notes_task: VisibleTask, tmp_path: Path) -> None:
    prepare_workspace(notes_task, tmp_path / "ws")
    names = sorted(p.relative_to(tmp_path / "ws").as_posix() for p in (tmp_path / "ws").rglob("*"))
    assert names == [CANDIDATE_FORMAT_FILE, REQUIREMENTS_FILE, "openapi.yaml", "spec.md"]
    assert "R2**: A note is visible only to its owner" in (tmp_path / "ws" / REQUIREMENTS_FILE).read_text()
    assert "ARG BASE_IMAGE=python:3.12-slim" in (tmp_path / "ws" / CANDIDATE_FORMAT_FILE).read_text()
    oracle_texts = [p.read_text(errors="replace") for p in (BENCH / "oracles" / "notes").rglob("*.py")]
    written = "\n".join(p.read_text(errors="replace") for p in (tmp_path / "ws").rglob("*") if p.is_file())
    assert oracle_texts and not any(text.strip() and text in written for text in oracle_texts)


def test_workspace_refuses_a_visible_file_linking_into_oracles(tmp_path: Path) -> None:
    import shutil

    shutil.copytree(BENCH, tmp_path / "bench")
    link = tmp_path / "bench" / "benchmarks" / "notes" / "hint.py"
    link.symlink_to(next((tmp_path / "bench" / "oracles" / "notes").rglob("*.py")))
    task = TaskCatalog(tmp_path / "bench").load("notes").visible
    with pytest.raises(TaskFormatError, match=r"hint\.py: resolves to .*outside .*least of all into oracles/"):
        prepare_workspace(task, tmp_path / "ws")


def test_bad_settings_are_refused_with_the_option_to_fix(notes_task: VisibleTask) -> None:
    with pytest.raises(ValueError, match=r"--agent-network 'host': expected one of bridge, none"):
        open_sandbox(SandboxSpec(task=notes_task, key="notes", session_id="x", network="host"), "docker")
    with pytest.raises(ValueError, match=r"sandbox engine 'vm': expected one of docker, process"):
        open_sandbox(SandboxSpec(task=notes_task, key="notes", session_id="x"), "vm")


def test_an_engine_that_does_not_answer_is_a_harness_error(notes_task: VisibleTask, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-such.sock")
    with pytest.raises(HarnessError, match=r"(docker engine does not answer|docker engine failed).*"):
        open_sandbox(SandboxSpec(task=notes_task, key="notes", session_id="x", image="any"), "docker")


# -- the docker sandbox --------------------------------------------------------------------------


@pytest.mark.docker
def test_output_and_exit_code_are_separated_exactly(engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str) -> None:
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        assert sandbox.sandboxed and sandbox.workspace == "/workspace"
        assert sandbox.run("printf 'no newline'").output == "no newline"
        assert sandbox.run("echo out; echo err >&2; echo out2").output == "out\nerr\nout2\n"
        binary = sandbox.run("printf 'a\\000b\\377c'")
        assert binary.exit_code == 0 and binary.output == "a\x00b\ufffdc"
        failed = sandbox.run("echo nope; exit 7")
        assert (failed.exit_code, failed.output, failed.timed_out) == (7, "nope\n", False)
        # The marker cannot be faked: the token is random per command.
        assert sandbox.run("printf '\\n__BB_DONE_0000_0__\\n'; exit 4").exit_code == 4
        assert sandbox.run("pwd; ls").output == "/workspace\nCANDIDATE_FORMAT.md\nREQUIREMENTS.md\nopenapi.yaml\nspec.md\n"
        assert sandbox.run("cd /tmp; pwd").output == "/tmp\n"
        assert sandbox.run("pwd").output == "/workspace\n"  # every command starts in the workspace
        reads = sandbox.run("cat; echo read-nothing")  # stdin is /dev/null, never the driver's input
        assert reads.output == "read-nothing\n" and reads.seconds < 2
        broken = sandbox.run('echo "unterminated')
        assert broken.exit_code == 2 and "unexpected EOF" in broken.output
        assert sandbox.run("echo __BB_EOF_x; echo fine").output == "__BB_EOF_x\nfine\n"
        # Output a background job prints after its command ended belongs to no command.
        sandbox.run("(sleep 0.3; echo late) & echo early")
        time.sleep(0.6)
        assert sandbox.run("echo next").output == "next\n"


@pytest.mark.docker
def test_a_command_past_its_timeout_is_killed_with_its_children_and_the_next_works(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        started = time.monotonic()
        hung = sandbox.run("echo started; sleep 311 & sleep 312", timeout_s=1)
        assert hung.timed_out and hung.exit_code is None and hung.output == "started\n"
        assert 1 <= hung.seconds < 4 and time.monotonic() - started < 5
        left = sandbox.run("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '")
        assert "sleep 31" not in left.output
        assert sandbox.run("echo next").output == "next\n"


@pytest.mark.docker
def test_background_servers_outlive_their_command_and_the_shell_survives_kill_all(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        start = sandbox.run("nohup python -m http.server 8123 >server.log 2>&1 & echo started", timeout_s=5)
        assert start.output == "started\n" and start.seconds < 2
        probe = "python -c \"import time,urllib.request as u\nfor _ in range(50):\n  try: print(u.urlopen('http://127.0.0.1:8123/spec.md').status); break\n  except OSError: time.sleep(0.1)\""
        assert sandbox.run(probe).output == "200\n"
        killed = sandbox.run("kill -9 -1; sleep 5")  # inside the container only: PID 1 and the sandbox survive
        assert killed.exit_code is None and "a new shell was started" in killed.output
        assert sandbox.run("echo still here").output == "still here\n"
        assert sandbox.run("(sleep 0.3; kill -9 $PPID) & echo bye").output == "bye\n"  # kills the shell later
        time.sleep(0.8)
        assert sandbox.run("echo new shell").output == "new shell\n"


@pytest.mark.docker
def test_megabytes_of_output_keep_head_and_tail_and_count_what_was_dropped(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        result = sandbox.run("echo FIRST; head -c 20000000 /dev/zero | tr '\\0' x; echo; echo LAST")
        assert result.exit_code == 0
        assert result.output.startswith("FIRST\nxxx") and result.output.endswith("xxx\nLAST\n")
        assert result.dropped_bytes == len("FIRST\n") + 20_000_000 + len("\nLAST\n") - SMALL.output_bytes
        assert f"[... {result.dropped_bytes} bytes of output left out by the sandbox ...]" in result.output
        assert len(result.output) < SMALL.output_bytes + 200
        assert sandbox.run("echo after").output == "after\n"


@pytest.mark.docker
def test_limits_reach_the_container_and_the_workspace_is_size_limited(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        assert isinstance(sandbox, DockerSandbox)
        host = engine.api.inspect_container(sandbox.container.id)["HostConfig"]
        assert (host["Memory"], host["NanoCpus"], host["PidsLimit"]) == (256 * 2**20, 10**9, 128)
        assert "NET_RAW" not in (host["CapAdd"] or []) and host["CapDrop"] == ["ALL"]
        full = sandbox.run("head -c 80000000 /dev/zero > big.bin")
        assert full.exit_code != 0 and "No space left on device" in full.output
        assert sandbox.run("rm big.bin && echo ok").output == "ok\n"
        hog = sandbox.run("python -c 'x = bytearray(600 * 2**20); print(len(x))'")
        assert hog.exit_code == 137 and hog.output == ""  # the OOM killer took the hog, not the sandbox
        bomb = sandbox.run("for i in $(seq 300); do sleep 5 & done 2>&1 | tail -1; wait", timeout_s=15)
        assert "bash: fork:" in bomb.output  # the pids limit (128) stops the 300 jobs
        assert sandbox.run("echo alive").output == "alive\n"
        assert "64m" in sandbox.description and "network none" in sandbox.description


@pytest.mark.docker
def test_network_none_leaves_only_loopback_and_bridge_has_an_interface(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never routed, so nothing outside is contacted.
    connect = "timeout 1 bash -c 'echo > /dev/tcp/192.0.2.1/80' 2>&1; echo rc=$?"
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image, network="none"), "docker") as sandbox:
        assert sandbox.run("ls /sys/class/net").output == "lo\n"
        assert sandbox.run("grep -v '^Iface' /proc/net/route | wc -l").output.strip() == "0"
        refused = sandbox.run(connect)
        assert "Network is unreachable" in refused.output and refused.seconds < 1.5
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image, network="bridge"), "docker") as sandbox:
        assert sandbox.run("ls /sys/class/net").output == "eth0\nlo\n"


@pytest.mark.docker
def test_copy_out_brings_the_workspace_without_scratch_files_or_links_out(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str, tmp_path: Path
) -> None:
    script = textwrap.dedent(
        """\
        mkdir -p src/pkg .backendbench
        printf 'print(1)\\n' > src/pkg/app.py
        printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh
        head -c 3000 /dev/urandom > blob.bin && sha256sum blob.bin | cut -d' ' -f1
        echo secret > .backendbench/usage.json
        ln -s /etc/passwd leak
        ln -s src/pkg/app.py inside-link
        """
    )
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image), "docker") as sandbox:
        digest = sandbox.run(script).output.strip()
        sandbox.copy_out(tmp_path / "candidate")
    out = tmp_path / "candidate"
    names = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert names == [
        CANDIDATE_FORMAT_FILE,
        REQUIREMENTS_FILE,
        "blob.bin",
        "inside-link",
        "openapi.yaml",
        "run.sh",
        "spec.md",
        "src",
        "src/pkg",
        "src/pkg/app.py",
    ]
    import hashlib

    assert hashlib.sha256((out / "blob.bin").read_bytes()).hexdigest() == digest
    assert (out / "src/pkg/app.py").read_text() == "print(1)\n"
    assert os.access(out / "run.sh", os.X_OK)
    assert (out / "inside-link").is_symlink() and (out / "inside-link").read_text() == "print(1)\n"


@pytest.mark.docker
def test_the_wall_time_bounds_the_whole_sample(engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str) -> None:
    limits = SandboxLimits(memory="256m", pids=128, disk="64m", command_timeout_s=60, wall_s=2)
    with open_sandbox(spec_for(notes_task, session_id, agent_base_image, limits=limits), "docker") as sandbox:
        slow = sandbox.run("sleep 30")
        assert slow.timed_out and slow.seconds < 4
        assert sandbox.remaining_s() == 0 and sandbox.wall_exhausted
        after = sandbox.run("echo too late")
        assert after.timed_out and after.output == "[not run: the sample's wall time of 2s is spent]\n"


@pytest.mark.docker
def test_close_leaves_nothing_labelled_even_after_an_error(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str
) -> None:
    spec = spec_for(notes_task, session_id, agent_base_image, network="bridge")
    with pytest.raises(RuntimeError, match="agent crashed"), open_sandbox(spec, "docker") as sandbox:
        assert count_session_objects(engine, session_id).total == 3  # container, network, volume
        raise RuntimeError("agent crashed")
    assert count_session_objects(engine, session_id).total == 0
    sandbox.close()  # idempotent
    with pytest.raises(HarnessError, match="is closed; open a new one"):
        sandbox.run("true")


@pytest.mark.docker
def test_a_crashed_harness_leaves_labelled_objects_that_the_reaper_removes(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str, tmp_path: Path
) -> None:
    crash = tmp_path / "crash.py"
    crash.write_text(
        textwrap.dedent(
            f"""\
            import os, signal
            from pathlib import Path
            from pytest_backendbench.agents.sandbox import SandboxSpec, SandboxLimits, open_sandbox
            from pytest_backendbench.tasks import TaskCatalog
            task = TaskCatalog(Path({str(BENCH)!r})).load("notes").visible
            box = open_sandbox(SandboxSpec(task=task, key="notes", session_id={session_id!r}, image={agent_base_image!r},
                                           limits=SandboxLimits(memory="256m", disk="64m")), "docker")
            box.run("echo working")
            os.kill(os.getpid(), signal.SIGKILL)  # no close, no atexit: a crash
            """
        )
    )
    done = subprocess.run([sys.executable, str(crash)], check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    assert count_session_objects(engine, session_id).total == 3
    remove_session_objects(None, session_id)  # what the plugin's reaper and `backendbench clean --session` run
    assert count_session_objects(engine, session_id).total == 0


@pytest.mark.docker
def test_ctrl_c_during_a_command_leaves_nothing(
    engine: DockerClient, notes_task: VisibleTask, session_id: str, agent_base_image: str, tmp_path: Path
) -> None:
    script = tmp_path / "interrupted.py"
    script.write_text(
        textwrap.dedent(
            f"""\
            from pathlib import Path
            from pytest_backendbench.agents.sandbox import SandboxSpec, SandboxLimits, open_sandbox
            from pytest_backendbench.tasks import TaskCatalog
            task = TaskCatalog(Path({str(BENCH)!r})).load("notes").visible
            spec = SandboxSpec(task=task, key="notes", session_id={session_id!r}, image={agent_base_image!r},
                               limits=SandboxLimits(memory="256m", disk="64m"))
            with open_sandbox(spec, "docker") as box:
                print("running", flush=True)
                box.run("sleep 120")
            """
        )
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "running\n"
    time.sleep(0.5)
    assert count_session_objects(engine, session_id).total == 3
    proc.send_signal(2)  # SIGINT, as Ctrl-C
    output = proc.communicate(timeout=60)[0]
    assert proc.returncode != 0 and "KeyboardInterrupt" in output
    assert count_session_objects(engine, session_id).total == 0


@pytest.mark.docker
@pytest.mark.slow
def test_the_default_agent_image_has_git_curl_and_build_tools(engine: DockerClient, notes_task: VisibleTask, session_id: str) -> None:
    """Builds the default image on first use (apt inside the build); later runs reuse the cached tag."""
    spec = SandboxSpec(task=notes_task, key="notes", session_id=session_id, network="none", limits=SMALL)
    with open_sandbox(spec, "docker") as sandbox:
        assert isinstance(sandbox, DockerSandbox)
        assert sandbox.description.startswith("docker sandbox backendbench/agent:")
        tools = sandbox.run("for t in git curl gcc make python pip; do command -v $t >/dev/null || echo missing $t; done; echo done")
        assert tools.output == "done\n"
        # pip-installed tools stay on PATH in the login shell.
        assert sandbox.run("echo $PATH").output.startswith("/opt/venv/bin:")
        serve = sandbox.run("nohup python -m http.server 8124 >/dev/null 2>&1 & sleep 0.5; curl -s -o /dev/null -w '%{http_code}' --retry 20 --retry-connrefused --retry-delay 0 http://127.0.0.1:8124/spec.md")
        assert serve.output == "200"
    image = engine.images.get(sandbox.image)
    assert image.labels["io.backendbench.cache"] == "1" and image.labels["io.backendbench.role"] == "agent-image"


# -- the process fallback ------------------------------------------------------------------------


def test_the_process_fallback_warns_and_still_times_out_caps_and_copies(notes_task: VisibleTask, tmp_path: Path) -> None:
    spec = SandboxSpec(task=notes_task, key="notes", session_id="process", limits=SMALL, env={"AGENT_VAR": "v1"})
    with pytest.warns(UnsandboxedAgentWarning, match="NOT|nothing is isolated"):
        sandbox = open_sandbox(spec, "process")
    assert isinstance(sandbox, ProcessSandbox) and not sandbox.sandboxed and "NOT sandboxed" in sandbox.description
    with sandbox:
        root = Path(sandbox.workspace)
        assert sandbox.run("printf %s \"$AGENT_VAR\"; echo e >&2; exit 5").output == "v1e\n"
        assert sandbox.run("exit 5").exit_code == 5
        hung = sandbox.run("echo started; sleep 313 & sleep 314", timeout_s=3)  # 3 s: bash starts slowly on a loaded machine
        assert hung.timed_out and hung.exit_code is None and hung.output == "started\n" and hung.seconds < 8
        assert "sleep 31" not in subprocess.run(["ps", "-eo", "args"], check=False, capture_output=True, text=True).stdout
        big = sandbox.run("head -c 5000000 /dev/zero | tr '\\0' y")
        assert big.dropped_bytes == 5_000_000 - SMALL.output_bytes
        assert sandbox.run("nohup sleep 315 >/dev/null 2>&1 & echo bg").output == "bg\n"
        sandbox.run("mkdir -p .backendbench app && echo x > app/main.py && echo s > .backendbench/usage.json && ln -s /etc/passwd leak")
        sandbox.copy_out(tmp_path / "out")
    names = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*"))
    assert names == [CANDIDATE_FORMAT_FILE, REQUIREMENTS_FILE, "app", "app/main.py", "openapi.yaml", "spec.md"]
    assert not root.exists()
    assert "sleep 315" not in subprocess.run(["ps", "-eo", "args"], check=False, capture_output=True, text=True).stdout
