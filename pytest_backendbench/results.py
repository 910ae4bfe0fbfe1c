"""The one result record every outcome produces, travelling from workers as plain dicts.

Collection errors, missing candidates, build and boot failures, item failures and harness
errors all become an ``ItemResult``; a task's items and phase data become a ``TaskResult``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from .runkey import RunKey

ORACLE_KINDS = ("http", "bdd", "snapshot")

FOUND_CWES_PROPERTY = "bench_found_cwes"
"""The ``item.user_properties`` key a security item sets to the CWEs it actually found."""
INCONCLUSIVE_PROPERTY = "bench_inconclusive"
"""The ``item.user_properties`` key a security item sets when it could not complete (BaxBench's None)."""
PARTIAL_PROPERTY = "bench_partial"
"""The ``item.user_properties`` key a failing item sets when its task grants a partial verdict."""
PRIMARY_STATUS_PROPERTY = "bench_primary_status"
"""The ``item.user_properties`` key the smoke item sets to the primary route's status code."""
CDN_PACKAGES_PROPERTY = "backendbench_cdn_packages"
"""The ``item.user_properties`` key a scenario item (bdd/gherkin.py) sets to the offline CDN's served packages."""
SPREAD_ITEMS_FIELD = "spread_items"
"""In a run's finishing phase data: the run's item count when its items spread over workers (each
worker finishes its share; the recorder ends the run when that many items have arrived)."""


def score_facts(user_properties: Any) -> tuple[bool, int | None]:
    """The partial-verdict flag and the primary route's status an item recorded (last wins)."""
    partial, status = False, None
    for name, value in user_properties or ():
        if name == PARTIAL_PROPERTY:
            partial = bool(value)
        elif name == PRIMARY_STATUS_PROPERTY and isinstance(value, int) and not isinstance(value, bool):
            status = value
    return partial, status


def security_facts(user_properties: Any) -> tuple[list[int], bool]:
    """The found CWEs and the inconclusive flag an item recorded in its user properties
    (the last value of each key wins; malformed values are ignored, never guessed)."""
    found: list[int] = []
    inconclusive = False
    for name, value in user_properties or ():
        if name == FOUND_CWES_PROPERTY and isinstance(value, (list, tuple, set, frozenset)):
            found = sorted({int(v) for v in value if isinstance(v, int) and not isinstance(v, bool)})
        elif name == INCONCLUSIVE_PROPERTY:
            inconclusive = bool(value)
    return found, inconclusive


@dataclass
class ItemResult:
    """How one collected item ended, with the tags the metrics need."""

    nodeid: str
    task: str
    candidate: str
    kind: str
    outcome: str
    phase: str = "tests"
    requirements: list[str] = field(default_factory=list)
    category: str | None = None
    cwe: int | None = None  # the first of ``cwes``; kept for one release
    cwes: list[int] = field(default_factory=list)  # every CWE the item's marker declares
    found_cwes: list[int] = field(default_factory=list)  # CWEs a security item found (empty when it passed)
    inconclusive: bool = False  # a security check that could not complete (passes, counts no CWE)
    partial: bool = False  # a failed item whose task grants a partial verdict (FullStack-Bench's 0.5)
    primary_status: int | None = None  # the smoke item's status of the primary route (app.build's AB-01)
    ab_checks: list[str] = field(default_factory=list)  # app.build checks (AB-xx) the item stands for
    app_check: dict[str, Any] = field(default_factory=dict)  # an app.build check the harness measured (appbuild/): check, grade, score, details
    tier: str = "base"
    weight: float = 1.0
    duration: float = 0.0
    message: str = ""
    requests: int = 0
    contract_checked: int = 0
    contract_violations: list[str] = field(default_factory=list)
    db_effects: list[dict[str, Any]] = field(default_factory=list)
    db_valid: bool | None = None
    artifacts: dict[str, str] = field(default_factory=dict)
    boot_seconds: float | None = None  # ``isolation: item``: seconds to start the fresh container this item met
    goal: dict[str, Any] | None = None  # an InfiniteWeb goal's evaluator outcome (bdd/scenarios/evaluators.py GoalOutcome.to_dict)
    judge: dict[str, Any] | None = None  # a judge case (kind "judge"): its verdict, judge kind, tokens, trajectory (judges/items.py)

    @property
    def is_oracle(self) -> bool:
        """Oracle items feed Test.Acc/Req.Acc; build/boot/smoke feed viability only."""
        return self.kind in ORACLE_KINDS

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (reports, xdist transport)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ItemResult:
        """Inverse of ``to_dict``; unknown keys from newer reports are ignored."""
        known = {f for f in cls.__dataclass_fields__}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class PhaseRecord:
    """One phase (setup, call or teardown) of a task item as ``pytest_runtest_makereport`` saw
    it; attached to the report as a plain dict (``report.backendbench``) so it travels from
    xdist workers, and merged by the recorder into the item's ``ItemResult``."""

    result: ItemResult
    when: str = "call"
    run_label: str = ""  # with result.task, the item's RunKey: the recorder builds it, never parses text
    task_data: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # facts of other concerns (db_problems, ...)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {"result": self.result.to_dict(), "when": self.when, "run_label": self.run_label, "task_data": self.task_data, "extra": self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PhaseRecord:
        """Inverse of ``to_dict``."""
        return cls(ItemResult.from_dict(data["result"]), data.get("when", "call"), data.get("run_label", ""), data.get("task_data"), dict(data.get("extra") or {}))

    @property
    def run_key(self) -> RunKey:
        """The item's run (task, run label)."""
        return RunKey(self.result.task, self.run_label)


OUTCOME_PRECEDENCE = ("error", "failed", "skipped", "passed")


def merge_phases(nodeid: str, phases: list[PhaseRecord], duration: float) -> ItemResult:
    """The item's result from its phases: the worst outcome (error > failed > skipped >
    passed), the first message, the first phase other than ``tests``, the last phase's facts."""
    last = phases[-1].result
    outcomes = {p.result.outcome for p in phases}
    outcome = next((o for o in OUTCOME_PRECEDENCE if o in outcomes), "passed")
    message = next((p.result.message for p in phases if p.result.message), "")
    phase = next((p.result.phase for p in phases if p.result.phase != "tests"), "tests")
    merged = ItemResult.from_dict({**last.to_dict(), "nodeid": nodeid, "outcome": outcome, "message": message, "phase": phase})
    merged.duration = round(duration, 4)
    return merged


@dataclass
class TaskResult:
    """One candidate's run of one task: phase data plus its items."""

    task: str
    candidate: str
    sample: str = ""
    repeat: int = 0
    candidate_path: str | None = None
    content_hash: str | None = None
    image: str | None = None
    image_digest: str | None = None
    build_cached: bool | None = None
    build_seconds: float | None = None
    ready_seconds: float | None = None
    phase_failed: str | None = None
    failure_reason: str | None = None
    service_log: str = ""
    generation: dict[str, Any] = field(default_factory=dict)
    finished: bool = False
    items: list[ItemResult] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        data = asdict(self)
        data["items"] = [item.to_dict() for item in self.items]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskResult:
        """Inverse of ``to_dict``."""
        known = {f for f in cls.__dataclass_fields__} - {"items"}
        result = cls(**{k: v for k, v in data.items() if k in known})
        result.items = [ItemResult.from_dict(i) for i in data.get("items", [])]
        return result

    @property
    def run_key(self) -> RunKey:
        """This run's identity, from its task, sample and repetition (never parsed from ``candidate``)."""
        return RunKey.of(self.task, self.sample, self.repeat)

    def absorb(self, phase_data: dict[str, Any]) -> None:
        """Merge task-level facts reported by a phase item (build, boot, finish)."""
        for key, value in phase_data.items():
            if key in self.__dataclass_fields__ and key != "items" and value is not None:
                setattr(self, key, value)
