"""The API judge (FullStack-Bench's backend test): an agent whose only tool sends HTTP requests.

First, once per candidate run, the judge gathers what the API offers: the task's openapi.yaml
when it has one (the contract the candidate was written against), else an exploration by the
agent itself (``GET /`` and whatever it links to) whose summary is kept. Every backend case of
that run reuses it, as FullStack-Bench reuses its information-gathering steps. Per case the
agent gets FullStack-Bench's backend testing prompt (its Figure 20) and the tool
``backend_test``; the requests go through the harness's contract-checking ``http`` session
(http/contract.py), so contract conformance and the database statement log are recorded as for
any item. The case ends with ``Final Judgement: YES`` or ``NO``; the DB-log check follows.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
import requests

from ..errors import HarnessError
from ..http.contract import ContractSession
from ..http.fixtures import http_sessions_of, item_options
from ..http.hang_guard import guard_for
from .case_run import CaseRun
from .cases import JudgeCase
from .model import JudgeModel
from .trajectory import JudgeOutcome, JudgeStep
from .verdicts import JudgeAnswerError, Verdict, parse_verdict

TOOL_NAME = "backend_test"
MAX_BODY_CHARS = 4000
MAX_OPENAPI_CHARS = 24000
EXPLORE_PURPOSE = "api-explore"
CASE_PURPOSE = "api-step"
API_INFO_KEY = pytest.StashKey[dict[str, str]]()
"""The API information of each run (by run key text), gathered once and shared by its backend cases."""

TOOL = {
    "type": "function",
    "function": {
        "name": TOOL_NAME,
        "description": "Send one HTTP request to the backend under test and get its status, content type and body.",
        "parameters": {
            "type": "object",
            "properties": {
                "method": {"type": "string", "description": "GET, POST, PUT, PATCH or DELETE"},
                "path": {"type": "string", "description": "the path with its query string, e.g. /events?limit=5"},
                "headers": {"type": "object", "description": "extra request headers, e.g. Authorization", "additionalProperties": {"type": "string"}},
                "json_body": {"description": "a JSON request body (object or array)"},
            },
            "required": ["method", "path"],
        },
    },
}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")

EXPLORE_PROMPT = """\
You are a senior software developer good at gathering information about a backend. The backend \
under test has no API documentation: explore it with the tool `backend_test` (start with GET / \
and follow what it shows: links, error messages, conventional paths) and gather, for each \
endpoint you find: its method and path, what it does, its request fields and types, its \
response fields and status codes. Do not fabricate endpoints you did not see answer. When you \
are done, answer with a summary of the endpoints (no tool call)."""

CASE_PROMPT = """\
You are a senior backend developer tasked with testing a backend API based on the user's instruction.

You will be given a backend testing task and the expected result. Your goal is to design and execute a backend API test that accurately reflects the user's intent and verifies the API functionality. You must use the specialized tool `backend_test`.

Follow these steps:

1. Analyze the user's instruction to identify the API endpoint, request method, parameters, and headers.
2. Formulate the exact testing input based on the API information and instructions.
3. Execute the test using `backend_test`.
4. If the test fails due to possible misunderstanding of the API, adjust and re-run the test.
5. If the failure is due to invalid data, adjust the data and retry.
6. Some tests may require calling a registration API before testing login.
7. Output a final judgement:
  - **YES**: expected result fully achieved.
  - **NO**: expected result not achieved.

#### Note:

- If the failure is due to a genuine bug, do not re-run the test.
- Do not test the same API multiple times without new evidence.
- Output exactly: Final Judgement: [YES | NO].

#### API information:

{api_info}

**Task:** {task}

**Expected Result:** {expected}
"""


class ApiAgent:
    """The tool-calling loop shared by exploration and cases: the model asks, the tool answers."""

    def __init__(self, model: JudgeModel, session: requests.Session, *, max_steps: int, deadline: float) -> None:
        self.model = model
        self.session = session
        self.max_steps = max_steps
        self.deadline = deadline
        self.steps: list[JudgeStep] = []
        self.tokens_in = 0
        self.tokens_out = 0

    def run(self, messages: list[dict[str, Any]], purpose: str) -> str:
        """Ask until the model answers without a tool call; that answer's text is returned."""
        for _ in range(self.max_steps):
            if time.monotonic() > self.deadline:
                raise HarnessError(f"the API judge ran out of time ({len(self.steps)} steps taken); raise --bench-judge-deadline")
            answer = self.model.ask(messages, purpose=purpose, tools=[TOOL])
            self.tokens_in += answer.tokens_in
            self.tokens_out += answer.tokens_out
            messages.append(answer.message or {"role": "assistant", "content": answer.text})
            if not answer.tool_calls:
                return answer.text
            for call in answer.tool_calls:
                action, result = self.tool(call.name, call.arguments)
                self.steps.append(JudgeStep(len(self.steps), None, answer.text, action))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
        raise HarnessError(f"the API judge reached no conclusion in {self.max_steps} steps (--bench-judge-max-steps)")

    def tool(self, name: str, arguments: str) -> tuple[str, str]:
        """(what the step did, what the model is told); a malformed call is explained to the model."""
        if name != TOOL_NAME:
            return f"unknown tool {name!r}", f"error: there is no tool {name!r}; the only tool is {TOOL_NAME}"
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            return "malformed arguments", f"error: the arguments are not JSON: {arguments[:200]!r}"
        if not isinstance(args, dict):
            return "malformed arguments", "error: the arguments must be a JSON object with method and path"
        method = str(args.get("method", "")).upper()
        path = str(args.get("path", ""))
        if method not in METHODS or not path.startswith("/"):
            return f"malformed request {method} {path}", f"error: method must be one of {', '.join(METHODS)} and path must start with /"
        raw_headers = args.get("headers")
        headers: dict[str, Any] = raw_headers if isinstance(raw_headers, dict) else {}
        kwargs: dict[str, Any] = {"headers": {str(k): str(v) for k, v in headers.items()}}
        if "json_body" in args and args["json_body"] is not None:
            kwargs["json"] = args["json_body"]
        try:
            response = self.session.request(method, path, **kwargs)
        except requests.RequestException as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            return f"{method} {path} -> no answer", f"the request failed: {first}"
        body = response.text
        shown = body if len(body) <= MAX_BODY_CHARS else body[:MAX_BODY_CHARS] + f"... ({len(body)} characters)"
        body_note = f" {json.dumps(kwargs['json'])[:200]}" if "json" in kwargs else ""
        action = f"{method} {path}{body_note} -> {response.status_code}"
        return action, f"HTTP {response.status_code}\nContent-Type: {response.headers.get('Content-Type', '')}\n\n{shown}"


def contract_session(item: CaseRun) -> ContractSession:
    """A session like the ``http`` fixture's (contract checks recorded, never strict), counted for the item."""
    options = item_options(item.config)
    run = item.task_run
    service = run.ensure_started()
    contract = run.contract() if options.check_contract else None
    session = ContractSession(service.base_url, contract, options.request_timeout_s, False, guard_for(item.config, service.base_url, options.request_timeout_s))
    http_sessions_of(item).append(session)
    return session


def api_information(item: CaseRun, session: requests.Session, deadline: float) -> tuple[str, list[JudgeStep]]:
    """The run's API information: its openapi.yaml, else the agent's exploration (gathered once per run)."""
    run = item.task_run
    gathered = item.config.stash.setdefault(API_INFO_KEY, {})
    if run.key in gathered:
        return gathered[run.key], []
    openapi = run.task.openapi_path
    steps: list[JudgeStep] = []
    if openapi is not None and openapi.is_file():
        text = openapi.read_text(encoding="utf-8")
        info = "The API's OpenAPI document (openapi.yaml):\n\n" + (text if len(text) <= MAX_OPENAPI_CHARS else text[:MAX_OPENAPI_CHARS] + "\n# ... (cut)")
    else:
        agent = ApiAgent(item.judge_model, session, max_steps=item.max_steps, deadline=deadline)
        summary = agent.run([{"role": "user", "content": EXPLORE_PROMPT}], EXPLORE_PURPOSE)
        if not summary.strip():
            raise JudgeAnswerError("the exploration ended without a summary of the endpoints", summary)
        info = "What an exploration of the API found:\n\n" + summary
        steps = [JudgeStep(s.index, None, s.model_text, f"explore: {s.action}") for s in agent.steps]
    gathered[run.key] = info
    return info, steps


def judge_backend_case(model: JudgeModel, case: JudgeCase, api_info: str, session: requests.Session, *, max_steps: int, deadline: float) -> JudgeOutcome:
    """One case: the agent tests, then says ``Final Judgement: YES`` or ``NO``."""
    agent = ApiAgent(model, session, max_steps=max_steps, deadline=deadline)
    prompt = CASE_PROMPT.format(api_info=api_info, task=case.instruction, expected=case.expected)
    final = agent.run([{"role": "user", "content": prompt}], CASE_PURPOSE)
    verdict = parse_verdict(final, allowed=(Verdict.YES, Verdict.NO))
    steps = [*agent.steps, JudgeStep(len(agent.steps), None, final, f"ANSWER; {verdict.value}")]
    reason = final.strip().splitlines()[-1][:300] if final.strip() else verdict.value
    return JudgeOutcome(verdict, reason, steps, agent.tokens_in, agent.tokens_out)


def run_backend_case(item: CaseRun) -> JudgeOutcome:
    """The backend case of a judge item, then FullStack-Bench's DB-log check over its statements."""
    from .db_log import interaction_confirmed, statements_during

    deadline = time.monotonic() + item.deadline_seconds
    with contract_session(item) as session:
        info, explore_steps = api_information(item, session, deadline)
        with statements_during(item.task_run) as window:
            outcome = judge_backend_case(item.judge_model, item.case, info, session, max_steps=item.max_steps, deadline=deadline)
    outcome.steps = [*explore_steps, *outcome.steps]
    for index, step in enumerate(outcome.steps):
        step.index = index
    if window.available and outcome.verdict is not Verdict.NO and item.case.db_interaction is not None:
        outcome.db_confirmed = interaction_confirmed(item.judge_model, item.case, window.statements)
    return outcome
