"""Turns pytest's own reports into result records, on the controller (or the only process).

Workers attach a plain dict (``report.backendbench``) to every test report; this plugin
merges the setup/call/teardown reports of each item into one ``ItemResult``, journals it,
and assembles ``TaskResult``s for the final report. Nothing is parsed from logs.
"""

from __future__ import annotations

import datetime as dt
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .metrics import MetricOptions
from .report.html import HTML_NAME, write_html
from .report.journal import Journal
from .report.json_report import build_report, write_report
from .report.markdown import write_markdown
from .report.merge import report_label
from .results import CDN_PACKAGES_PROPERTY, SPREAD_ITEMS_FIELD, ItemResult, PhaseRecord, TaskResult, merge_phases
from .runkey import RunKey
from .scores.versions import harness_version


@dataclass
class _Pending:
    """The phases of one item seen so far."""

    phases: list[PhaseRecord] = field(default_factory=list)
    duration: float = 0.0


class ResultRecorder:
    """Collects item results as they arrive and writes the report at the end of the session."""

    def __init__(
        self,
        report_dir: Path,
        manifest: dict[str, Any],
        metric_options: MetricOptions,
        carried_over: list[TaskResult],
        hook: Any,
    ) -> None:
        self.hook = hook
        self.report_dir = report_dir
        self.manifest = manifest
        self.metric_options = metric_options
        self.tasks: dict[str, TaskResult] = {}
        self._pending: dict[str, _Pending] = {}
        self._journal: Journal | None = None  # opened on the first record: a run refused at collection writes nothing
        self.document: dict[str, Any] | None = None
        self.interrupted = False
        self.collection_errors: list[dict[str, str]] = []
        self.cdn_packages: dict[tuple[str, str, str], dict[str, Any]] = {}  # (package, requested, version) -> entry
        self._nodeids: dict[str, set[str]] = {}  # candidate key -> node ids recorded (no rescans per item)
        self._arrived: dict[str, int] = {}  # candidate key -> items recorded in this session
        for result in carried_over:
            self.tasks[result.candidate] = result
            for item in result.items:
                self.journal.item(item)
            if result.finished:
                self.journal.task(result)

    @property
    def journal(self) -> Journal:
        """The item journal (report/journal.py), created with the first thing recorded."""
        if self._journal is None:
            self._journal = Journal(self.report_dir)
        return self._journal

    def _task(self, item: ItemResult, run: RunKey) -> TaskResult:
        key = item.candidate
        if key not in self.tasks:
            self.tasks[key] = TaskResult(task=item.task, candidate=key, sample=run.sample, repeat=run.repeat)
        return self.tasks[key]

    @pytest.hookimpl
    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.collection_errors.append({"nodeid": report.nodeid, "message": str(report.longrepr).strip()[-2000:]})

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._absorb_cdn_packages(report)
        data = getattr(report, "backendbench", None)
        if not isinstance(data, dict):
            return
        record = PhaseRecord.from_dict(data)
        # xdist's loadgroup appends "@<group>" to node ids; reports use the plain id
        nodeid = record.run_key.plain_nodeid(report.nodeid)
        pending = self._pending.setdefault(nodeid, _Pending())
        pending.phases.append(record)
        pending.duration += report.duration
        if report.when == "teardown":
            self._finish_item(nodeid)

    def _absorb_cdn_packages(self, report: pytest.TestReport) -> None:
        """Packages the offline CDN served (bdd/gherkin.py puts them in the items' user properties)."""
        for name, value in getattr(report, "user_properties", ()):
            if name != CDN_PACKAGES_PROPERTY or not isinstance(value, list):
                continue
            for entry in value:
                if isinstance(entry, dict):
                    key = (str(entry.get("package")), str(entry.get("requested")), str(entry.get("version")))
                    self.cdn_packages.setdefault(key, entry)

    def _finish_item(self, nodeid: str) -> None:
        pending = self._pending.pop(nodeid)
        item = merge_phases(nodeid, pending.phases, pending.duration)
        task_data = pending.phases[-1].task_data
        task = self._task(item, pending.phases[-1].run_key)
        seen = self._nodeids.setdefault(task.candidate, {i.nodeid for i in task.items})
        if nodeid in seen:  # a re-run (--bench-rerun-errors) replaces the carried-over result
            task.items = [i for i in task.items if i.nodeid != nodeid]
        seen.add(nodeid)
        task.items.append(item)
        self.journal.item(item)
        arrived = self._arrived[task.candidate] = self._arrived.get(task.candidate, 0) + 1
        if task_data:
            # a run spread over workers is finished by each: only its last item ends it
            complete = arrived >= int(task_data.get(SPREAD_ITEMS_FIELD) or 0)
            task.absorb(task_data if complete else {k: v for k, v in task_data.items() if k != "finished"})
            if task_data.get("finished") and complete:
                task.finished = True
                self.journal.task(task)
                self.hook.pytest_backendbench_task_result(task=task.task, result=task)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus == pytest.ExitCode.USAGE_ERROR and self._journal is None:
            return  # refused before anything ran (e.g. --oracle-tier naming no tier): no report
        self.interrupted = self.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED
        self.write()

    @pytest.hookimpl
    def pytest_keyboard_interrupt(self) -> None:
        self.interrupted = True

    def write(self) -> None:
        """Write report.json and summary.md from everything recorded so far."""
        manifest = {
            **self.manifest,
            "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "interrupted": self.interrupted,
            "collection_errors": self.collection_errors,
        }
        if self.cdn_packages:
            manifest["cdn_packages"] = [self.cdn_packages[key] for key in sorted(self.cdn_packages)]
        self.document = build_report(list(self.tasks.values()), manifest, self.metric_options)
        write_report(self.report_dir, self.document)
        write_markdown(self.report_dir, self.document)
        write_html(self.report_dir / HTML_NAME, [(report_label(self.report_dir, self.document), self.document)])
        self.journal.close()


def base_manifest(runtime: str, session_id: str, options: dict[str, Any], seed: int, shard: str | None) -> dict[str, Any]:
    """The run manifest: what ran, where, with which options."""
    return {
        "harness_version": harness_version(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "runtime": runtime,
        "session_id": session_id,
        "started_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "finished_at": "",
        "seed": seed,
        "shard": shard,
        "options": options,
        "candidates": {},
        "interrupted": False,
    }
