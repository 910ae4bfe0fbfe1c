"""Settings of the ``openai:<model>`` generator and of the model server ``agent:`` runs use (part of config.py's table).

Cheap to import on purpose: it is read at every pytest start, requests is not. The API key is
environment-only (``BACKENDBENCH_OPENAI_API_KEY``): a key on a command line shows in process lists.
"""

from __future__ import annotations

from ..config import Setting
from ..setting_values import http_url, seconds

SETTINGS: tuple[Setting, ...] = (
    # llm/chat.py reads them through their dests (OpenAISettings.from_config), or
    # without a pytest config through config.environment_value (OpenAISettings.resolved)
    Setting("openai_base_url", "--openai-base-url", http_url, help="OpenAI-compatible API root, e.g. http://localhost:8000/v1", group="generate", metavar="URL", dest="openai_base_url"),
    Setting("openai_timeout", "--openai-timeout", seconds, None, "seconds to wait for one answer (default 600)", group="generate", metavar="S", dest="openai_timeout"),
    Setting("openai_attempts", "--openai-attempts", int, None, "answers per sample when one is unusable (default 3)", group="generate", metavar="N", dest="openai_attempts"),
    Setting("openai_max_tokens", "--openai-max-tokens", int, None, "max_tokens per answer (default: the server's)", group="generate", metavar="N", dest="openai_max_tokens"),
    Setting("openai_temperature", "--openai-temperature", float, None, "sampling temperature (default: the server's)", group="generate", metavar="T", dest="openai_temperature"),
    Setting("openai_price", "--openai-price", help="USD per million input/output tokens, for cost_usd", group="generate", metavar="IN/OUT", dest="openai_price"),
    Setting("openai_api_key", None, help="API key of the OpenAI-compatible server (environment only, never on a command line)", group="generate", ini=""),
    Setting(
        "openai_reasoning_effort", "--openai-reasoning-effort", help="reasoning_effort sent with every chat request (e.g. low, medium, high; default: the server's)",
        group="generate", metavar="EFFORT", dest="openai_reasoning_effort",
    ),
)

SETTING_OF_FIELD = {
    "base_url": "openai_base_url",
    "api_key": "openai_api_key",
    "timeout_s": "openai_timeout",
    "attempts": "openai_attempts",
    "max_tokens": "openai_max_tokens",
    "temperature": "openai_temperature",
    "price": "openai_price",
    "reasoning_effort": "openai_reasoning_effort",
}
"""``OpenAISettings`` field -> the setting (row above) that supplies it."""


def env_var(field: str) -> str:
    """The environment variable behind an ``OpenAISettings`` field, for messages that name it."""
    name = SETTING_OF_FIELD[field]
    setting = next(s for s in SETTINGS if s.name == name)
    return setting.env_var or name
