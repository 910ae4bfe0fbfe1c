"""Agents that work in a sandbox: the sandbox, the built-in loop and ``cmd:`` agent CLIs.

One module per concern: ``sandbox`` (containers or the process fallback), ``shell`` (the
long-lived shell commands run through), ``workspace`` (the visible task as files),
``agent_image`` (the default sandbox image), ``cli_agent`` (``cmd:<name>`` agents).
"""
