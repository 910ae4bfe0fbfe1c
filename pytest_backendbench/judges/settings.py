"""Settings of the agent judges (part of config.py's table).

Cheap to import on purpose: it is read at every pytest start. The judge has its own server
(``--bench-judge-base-url``), apart from the generator's ``--openai-*`` one, so that a run can
generate with one model and judge with another; its key is environment-only
(``BACKENDBENCH_JUDGE_API_KEY``): a key on a command line shows in process lists.
"""

from __future__ import annotations

from ..config import Setting
from ..setting_values import http_url

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "judge", "--bench-judge", help="run the judge cases (oracles/<task>/judge/cases.yaml) with this model: openai:<model> (vision for frontend cases)",
        group="judge", metavar="MODEL",
    ),
    Setting("judge_base_url", "--bench-judge-base-url", http_url, help="the judge's OpenAI-compatible API root, e.g. http://localhost:8000/v1 (default: --openai-base-url's)", group="judge", metavar="URL"),
    Setting("judge_api_key", None, help="API key of the judge's server (environment only, never on a command line)", group="judge", ini=""),
    Setting("judge_temperature", "--bench-judge-temperature", float, 0.0, "the judge's sampling temperature", group="judge", metavar="T"),
    Setting("judge_seed", "--bench-judge-seed", int, 0, "the judge's sampling seed (repetition k of --bench-repeat asks with seed + k - 1)", group="judge", metavar="N"),
    Setting("judge_max_steps", "--bench-judge-max-steps", int, 15, "actions a judge may take in one case (WebVoyager's and WebGen-Bench's 15)", group="judge", metavar="N"),
    Setting("judge_deadline", "--bench-judge-deadline", float, 300.0, "wall-clock seconds one judge case may take", group="judge", metavar="S"),
    Setting("judge_timeout", "--bench-judge-timeout", float, 120.0, "seconds to wait for one answer of the judge's server", group="judge", metavar="S"),
    Setting("judge_price", "--bench-judge-price", help="the judge's USD per million input/output tokens, for its cost", group="judge", metavar="IN/OUT"),
    Setting(
        "judge_replay", "--bench-judge-replay", action="store_true", default=False,
        help="answer every judge request from the report dir's judge-cache only, reaching no server (a request not cached is an error)", group="judge",
    ),
)
