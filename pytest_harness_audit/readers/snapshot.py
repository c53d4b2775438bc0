"""The syrupy extension for session reports: one readable ``.audit.yaml`` file per snapshot.

``assert harness.report() == audit_snapshot`` keeps the report under
``__snapshots__/<test file>/<test name>.audit.yaml``; ``pytest --snapshot-update`` accepts a new
one, and a changed decision shows as a one-line change in the failure diff and the pull request.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import pytest
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_harness_audit.readers.report import SessionReport, split_report_file

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion
    from syrupy.types import PropertyFilter, PropertyMatcher, SerializableData, SerializedData


_ANSI_STYLE = re.compile(r"\x1b\[[0-9;]*m")


class ReportedSession(Protocol):
    """A session that renders its report (``Harness`` does)."""

    @property
    def session_id(self) -> str:
        """The session's id."""

    def report(self, *, output_hashes: bool = True) -> SessionReport:
        """The session's deterministic report."""


class AuditReportExtension(SingleFileSnapshotExtension):
    """Stores a :class:`~pytest_harness_audit.readers.report.SessionReport` (or its text) as one
    UTF-8 YAML file per snapshot, ending ``.audit.yaml``."""

    file_extension = "audit.yaml"
    _write_mode = WriteMode.TEXT

    def serialize(
        self,
        data: SerializableData,
        *,
        exclude: PropertyFilter | None = None,
        include: PropertyFilter | None = None,
        matcher: PropertyMatcher | None = None,
    ) -> SerializedData:
        """The report's YAML text; a string is taken as an already rendered report (a report
        file's published head, which differs on every run, left out)."""
        if isinstance(data, SessionReport):
            return data.render()
        if isinstance(data, str):
            return split_report_file(data)[0]
        raise TypeError(
            f"audit_snapshot stores session reports: compare harness.report(), "
            f"not {type(data).__name__}"
        )


def snapshot_sessions(
    sessions: Sequence[ReportedSession], assertion: SnapshotAssertion, *, colors: bool = True
) -> list[str]:
    """Compare each session's report with the next snapshot of ``assertion``; one problem text
    (with the diff) per mismatch. With ``--snapshot-update`` syrupy writes instead."""
    problems: list[str] = []
    for harness in sessions:
        report = harness.report()
        if assertion == report:
            continue
        result = assertion.executions[assertion.num_executions - 1]
        diff = assertion.get_assert_diff()
        if not colors:
            diff = [_ANSI_STYLE.sub("", line) for line in diff]
        name = Path(result.snapshot_location).name
        problems.append(
            f"session report of {harness.session_id} differs from snapshot {name} "
            f"(run pytest --snapshot-update to accept it):\n" + "\n".join(diff)
        )
    return problems


def diff_colors(config: pytest.Config) -> bool:
    """Whether snapshot diffs in failure messages may carry terminal colours: not with
    ``--snapshot-no-colors``, ``--color=no`` or ``NO_COLOR``, nor when output is not a terminal
    (CI logs, JUnit files, xdist workers) unless ``--color=yes``."""
    if getattr(config.option, "no_colors", False):
        return False
    color = getattr(config.option, "color", "auto")
    if color in ("yes", "no"):
        return bool(color == "yes")
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def failed_report_diffs(assertion: object) -> list[str]:
    """For each failed comparison of an ``audit_snapshot`` in a test: a unified diff of the
    snapshot (``-``) and the received report (``+``) with every changed line, for the failure
    output (pytest shortens an assertion's own explanation unless ``-vv``)."""
    executions = getattr(assertion, "executions", None)
    extension = getattr(assertion, "extension_class", None)
    if not isinstance(executions, dict) or extension is not AuditReportExtension:
        return []
    diffs = []
    for result in executions.values():
        if result.success or result.recalled_data is None:
            continue
        snapshot = str(result.recalled_data).splitlines()
        received = str(result.asserted_data).splitlines()
        name = f"{Path(str(result.snapshot_location)).name}::{result.snapshot_name}"
        lines = difflib.unified_diff(
            snapshot, received, f"snapshot {name}", "received report", n=1, lineterm=""
        )
        diffs.append("\n".join(lines))
    return diffs
