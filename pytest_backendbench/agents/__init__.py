"""Agents that work in a sandbox: the sandbox, the built-in loop and ``cmd:`` agent CLIs.

One module per concern: ``sandbox_base``/``sandbox``/``process_sandbox`` (the sample's
sandbox: spec, docker, the unsandboxed fallback), ``shell`` (the long-lived shell commands run
through), ``workspace`` (the visible task as files), ``agent_image`` (the sandbox images),
``loop`` (``agent:<model>``), ``cli_agent``/``cli_checks``/``cli_run`` (``cmd:<name>`` agents:
definitions, usage errors, one run), ``adapters``/``trajectories`` (the built-in agent CLIs
and their trajectories), ``proxy`` (the metering model proxy).
"""
