"""The syrupy extension for session reports: one readable ``.audit.yaml`` file per snapshot.

``assert harness.report() == audit_snapshot`` keeps the report under
``__snapshots__/<test file>/<test name>.audit.yaml``; ``pytest --snapshot-update`` accepts a new
one, and a changed decision shows as a one-line change in the failure diff and the pull request.
"""

from __future__ import annotations

import difflib
import io
import os
import re
import stat
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

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
    #: The snapshot files as the run found them (set by the ``audit_snapshot`` fixture): a
    #: comparison with a file that differs from it fails instead of reading the file.
    baseline: SnapshotBaseline | None = None

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> Any:
        """The snapshot file's text, read once; with a :attr:`baseline`, a file changed since
        the run started raises :class:`SnapshotChanged` instead."""
        if self.baseline is None:
            return super().read_snapshot_data_from_location(
                snapshot_location=snapshot_location,
                snapshot_name=snapshot_name,
                session_id=session_id,
            )
        data = self.baseline.check(snapshot_location)
        if data is None:
            return None
        encoding = self.get_write_encoding() or "utf-8"
        return io.TextIOWrapper(io.BytesIO(data), encoding=encoding).read()

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


class SnapshotChanged(AssertionError):
    """A snapshot file changed after the run started, by something other than
    ``--snapshot-update`` (an agent's call, say): the comparison is refused."""


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file; ``None`` when nothing is there. Anything else at the path
    (a link, a folder, a FIFO) is not read and reads as a marker no file holds."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return f"<not a regular file: mode {info.st_mode:o}>".encode()
    return path.read_bytes()


class SnapshotBaseline:
    """The snapshot files of a run's snapshot folders, as they were before any test of the
    run used them (taken before any agent's call). A comparison reads a file only when it is
    still what it was: an agent that rewrites the snapshot of its own test (or of another) cannot
    make the comparison pass."""

    def __init__(self) -> None:
        self._files: dict[Path, dict[str, bytes]] = {}

    def record(self, directory: str | os.PathLike[str]) -> None:
        """Keep every file of ``directory`` (once: a folder already kept is not read again)."""
        folder = Path(directory)
        if folder in self._files:
            return
        self._files[folder] = self._read(folder)

    @staticmethod
    def _read(folder: Path) -> dict[str, bytes]:
        try:
            names = sorted(entry.name for entry in os.scandir(folder))
        except (FileNotFoundError, NotADirectoryError):
            return {}
        found = {}
        for name in names:
            data = _read_regular(folder / name)
            if data is not None:
                found[name] = data
        return found

    def check(self, location: str | os.PathLike[str]) -> bytes | None:
        """The bytes of the snapshot file at ``location`` (``None``: there is none), when they
        are what the run started with; :class:`SnapshotChanged` otherwise."""
        path = Path(location)
        kept = self._files.get(path.parent)
        data = _read_regular(path)
        if kept is not None and kept.get(path.name) != data:
            raise SnapshotChanged(changed_line(path))
        return data

    def changes(self, directory: str | os.PathLike[str]) -> list[Path]:
        """The snapshot files of ``directory`` changed, created or removed since the run
        started."""
        folder = Path(directory)
        kept = self._files.get(folder)
        if kept is None:
            return []
        now = self._read(folder)
        names = sorted(set(kept) | set(now))
        return [folder / name for name in names if kept.get(name) != now.get(name)]

    def accept(self, path: Path) -> None:
        """Keep ``path`` as it is now (syrupy wrote it for the test that just ran)."""
        kept = self._files.get(path.parent)
        data = _read_regular(path)
        if kept is not None and data is not None:
            kept[path.name] = data


def changed_line(path: Path) -> str:
    """The one line of a snapshot file that changed after the run started."""
    return (
        f"{path}: the snapshot file changed during the test run (not by --snapshot-update); "
        "the session report is not compared with it"
    )


def _written(assertion: object) -> dict[Path, str]:
    """The report each passing comparison of ``assertion`` found or had syrupy write, by file."""
    executions = getattr(assertion, "executions", None)
    if not isinstance(executions, dict):
        return {}
    if getattr(assertion, "extension_class", None) is not AuditReportExtension:
        return {}
    return {
        Path(str(result.snapshot_location)): str(result.asserted_data)
        for result in executions.values()
        if result.success and result.asserted_data is not None
    }


def _holds(path: Path, text: str) -> bool:
    data = _read_regular(path)
    return data is not None and io.TextIOWrapper(io.BytesIO(data), encoding="utf-8").read() == text


def end_of_test_changes(
    assertion: object, baseline: SnapshotBaseline | None, folder: str | None
) -> list[str]:
    """One line per snapshot file a test's run changed behind the plugin's back. With a
    baseline: a file of the test's folder that differs from the run's start, unless syrupy wrote
    it for this test (``--snapshot-update-new-only``) and it still holds that. Under
    ``--snapshot-update`` (no baseline): a file the test compared that no longer holds the
    report written (or found) there."""
    written = _written(assertion)
    if baseline is None or folder is None:
        return [changed_line(path) for path, text in written.items() if not _holds(path, text)]
    lines = []
    for path in baseline.changes(folder):
        if path in written and _holds(path, written[path]):
            baseline.accept(path)
        else:
            lines.append(changed_line(path))
    return lines


def snapshot_folder(assertion: SnapshotAssertion) -> str:
    """The folder holding the snapshot files of ``assertion``'s test."""
    return AuditReportExtension.dirname(test_location=assertion.test_location)


def guard_snapshots(assertion: SnapshotAssertion, baseline: SnapshotBaseline) -> str:
    """Keep the test's snapshot folder in ``baseline`` (unless already kept) and have
    ``assertion`` compare only with files unchanged since; return the folder."""
    folder = snapshot_folder(assertion)
    baseline.record(folder)
    extension = assertion.extension
    if isinstance(extension, AuditReportExtension):
        extension.baseline = baseline
    return folder


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
        if isinstance(result.exception, SnapshotChanged):
            problems.append(str(result.exception))
            continue
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


def keep_snapshot_folders(items: Sequence[pytest.Item], baseline: SnapshotBaseline) -> None:
    """Keep, before any test runs, the snapshot folder of every test that compares session
    reports (``audit_snapshot`` or ``harness_snapshot``)."""
    from syrupy.location import PyTestLocation

    for item in items:
        uses = "audit_snapshot" in getattr(item, "fixturenames", ())
        if not uses and item.get_closest_marker("harness_snapshot") is None:
            continue
        try:
            location = PyTestLocation(item)
        except (AttributeError, TypeError, ValueError):  # an item syrupy cannot place
            continue
        baseline.record(AuditReportExtension.dirname(test_location=location))
