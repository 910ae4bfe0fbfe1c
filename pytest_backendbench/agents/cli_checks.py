"""Configuration errors of ``cmd:`` agents, found before collection and reported as usage errors.

An unknown agent, a built-in without a model name, a pass-through variable that is not set,
an ``image=`` the engine neither holds nor can pull, a built-in agent on ``--agent-network
none`` (it could not reach the model proxy): each would otherwise fail every sample, one at a
time, as that sample's error. The message names the ini file pytest read, because a value
written with a space (``--bench-root ../checkout``) can make pytest pick another rootdir and
ini file, where the agent line is missing.
"""

from __future__ import annotations

import os

import pytest

from .cli_agent import AgentDefinitionError, agent_definitions, resolve_agent


def ini_note(config: pytest.Config) -> str:
    """Which ini file was read, and the ``--opt=value`` hint."""
    ini = config.inipath
    read = f"ini file read: {ini}" if ini else f"no ini file was found (rootdir {config.rootpath})"
    return (
        f" ({read}; if that is not the file holding your backendbench_agents lines, an option's value written with a "
        "space, e.g. `--bench-root ../checkout`, may have made pytest choose another rootdir: write it with `=`, "
        "`--bench-root=../checkout`)"
    )


def check_cli_agent(config: pytest.Config, model: str, engine: str, network: str) -> None:
    """Raise ``pytest.UsageError`` for a ``cmd:`` model that cannot run, before anything is generated."""
    try:
        choice = resolve_agent(agent_definitions(config), model)
        choice.definition.environment(os.environ)
    except AgentDefinitionError as err:
        raise pytest.UsageError(f"{err}{ini_note(config)}") from err
    definition = choice.definition
    if (definition.network or network) == "none" and choice.adapter is not None:
        raise pytest.UsageError(
            f"--bench-model {model}: the built-in {choice.adapter.title} adapter reaches its model through the harness's proxy, "
            "which a sandbox on --agent-network=none cannot reach; use --agent-network=bridge"
        )
    if engine == "docker" and definition.image:
        _check_image(definition.image, model)


def _check_image(image: str, model: str) -> None:
    import docker
    from docker.errors import DockerException, ImageNotFound

    try:
        client = docker.from_env(timeout=60)
    except DockerException:
        return  # no engine: the runtime's own check says so
    try:
        try:
            client.images.get(image)
        except ImageNotFound:
            try:
                client.images.pull(image)
            except DockerException as err:
                raise pytest.UsageError(
                    f"--bench-model {model}: the agent's image {image} is neither on the engine nor pullable ({err}); "
                    f"build it (`docker build -t {image} ...`, or `backendbench agent-image --with NAME` for a built-in) "
                    "or fix image= in the backendbench_agents line"
                ) from err
        except DockerException:
            return
    finally:
        client.close()
