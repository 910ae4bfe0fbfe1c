"""The one result record every outcome produces, travelling from workers as plain dicts.

Collection errors, missing candidates, build and boot failures, item failures and harness
errors all become an ``ItemResult``; a task's items and phase data become a ``TaskResult``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

ORACLE_KINDS = ("http", "bdd", "snapshot")


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
    cwe: int | None = None
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
    xdist_group: str = ""
    task_data: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # facts of other concerns (db_problems, ...)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form."""
        return {"result": self.result.to_dict(), "when": self.when, "xdist_group": self.xdist_group, "task_data": self.task_data, "extra": self.extra}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PhaseRecord:
        """Inverse of ``to_dict``."""
        return cls(ItemResult.from_dict(data["result"]), data.get("when", "call"), data.get("xdist_group", ""), data.get("task_data"), dict(data.get("extra") or {}))


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

    def absorb(self, phase_data: dict[str, Any]) -> None:
        """Merge task-level facts reported by a phase item (build, boot, finish)."""
        for key, value in phase_data.items():
            if key in self.__dataclass_fields__ and key != "items" and value is not None:
                setattr(self, key, value)
