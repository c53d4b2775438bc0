"""The session report: a deterministic, human-readable YAML document of one harness session.

It is what snapshot files, ``--harness-audit`` report files and the pytest-html extras show, so a
change in what an agent did, or in how it was judged, is a small line diff in a pull request.
Everything comes from the verified chain. Nothing that differs between runs, machines or xdist
workers goes in: no timestamps, durations, record or session ids, hosts, absolute or temporary
paths. Each call is one line and carries its own part of the verdict, so one changed decision
changes that line, and the ``verdict`` line only when the session's verdict changes with it.

A report *file* (``write_report``) may end with the session's published head — its record count
and 64-hex hash, which differ on every run — after a ``HEAD_MARK`` comment line: outside the
document, so snapshots never see it (``split_report_file``).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from pytest_harness_audit.audit.atomic_file import replace_file
from pytest_harness_audit.audit.record_view import CallRecord
from pytest_harness_audit.audit.records import display_target
from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.audit.witness import Head
from pytest_harness_audit.readers.report_lines import (
    AlertLine,
    CallLine,
    EscalationLine,
    LiftLine,
    OtherLine,
)
from pytest_harness_audit.readers.report_yaml import flow
from pytest_harness_audit.readers.verdict import Verdict, VerdictReason, judge_record

if TYPE_CHECKING:
    from pytest_harness_audit.audit.verify import ChainReport
    from pytest_harness_audit.readers.session_view import AuditedSession

#: Hex digits kept of the policy content hash and of output hashes.
SHORT_HASH = 12
#: Folder of report files under the storage directory (beside ``audit/`` and ``sessions/``).
REPORTS_DIR = "reports"
HEADER = "# harness-audit session report"
#: The comment line that starts a report file's published head, after the document.
HEAD_MARK = "# published head, not part of the report document"

_PATH_END = r"""[\s'"`;|&<>()=:,\]}]"""
_BOUNDARY = f"(?={_PATH_END}|$)"
_PATH_REST = r"""[^\s'"`;|&<>()]*"""
#: Where a path may start: the text's start or after a character no path is spelt with here
#: (``/var/tmp`` does not hold the temporary directory ``/tmp``).
_PATH_START = r"""(?<![^\s'"`;|&<>()=:,\[\]{}])"""


class PathScrubber:
    """Rewrites machine-specific paths in text: the workspace root becomes relative (``.`` for
    the root itself), the storage directory ``<audit>``, anything under the temporary directory
    ``<tmp>`` and the home directory ``~``."""

    def __init__(self, workspace: str | Path, *, storage: str | Path | None = None) -> None:
        self._rules: list[tuple[re.Pattern[str], str]] = []
        for root in _variants(workspace):
            self._add(re.escape(root) + "/", "")
            self._add(re.escape(root) + _BOUNDARY, ".")
        if storage is not None:
            for root in _variants(storage):
                self._add(re.escape(root) + f"(?:/{_PATH_REST})?{_BOUNDARY}", "<audit>")
        for root in _variants(tempfile.gettempdir()):
            self._add(_PATH_START + re.escape(root) + f"(?:/{_PATH_REST})?{_BOUNDARY}", "<tmp>")
        home = os.path.expanduser("~")
        if home not in ("", "/", "~"):
            for root in _variants(home):
                self._add(_PATH_START + re.escape(root) + f"(?=/|{_PATH_END}|$)", "~")

    def _add(self, pattern: str, replacement: str) -> None:
        self._rules.append((re.compile(pattern), replacement))

    def __call__(self, text: str) -> str:
        for pattern, replacement in self._rules:
            text = pattern.sub(replacement, text)
        return text


def _variants(path: str | Path) -> list[str]:
    """The spellings of ``path`` that may appear in text, longest first (``/tmp`` may be
    ``/private/tmp`` once resolved)."""
    raw = os.path.abspath(str(path)).rstrip("/")
    found = {raw, os.path.realpath(raw).rstrip("/")}
    return sorted((v for v in found if v), key=len, reverse=True)


@dataclass(frozen=True, eq=False)
class SessionReport:
    """The report of one session. ``render()`` (also ``str()``) is the YAML document.

    A record line that counts towards the verdict carries its part (``verdict: FAIL``);
    ``other_reasons`` holds the reasons no line shows: an invalid chain, plugin verdict rules.

    A report equals another report, or a string, with the same rendered text, so
    ``assert harness.report() == audit_snapshot`` compares documents. ``head`` (the session's
    published head) is not part of the document: only a report file carries it.
    """

    policy_name: str
    policy_hash: str
    workspace: str
    calls: tuple[CallLine, ...]
    escalations: tuple[EscalationLine, ...]
    lifts: tuple[LiftLine, ...]
    alerts: tuple[AlertLine, ...]
    chain_valid: bool
    chain_records: int
    verdict: Verdict
    other_reasons: tuple[str, ...]
    chain_problem: str | None = None
    other: tuple[OtherLine, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict)
    head: Head | None = None

    def to_dict(self) -> dict[str, Any]:
        """The document as plain data (what ``yaml.safe_load`` of :meth:`render` gives)."""
        chain: dict[str, Any] = {"valid": self.chain_valid, "records": self.chain_records}
        if self.chain_problem:
            chain["problem"] = self.chain_problem
        data: dict[str, Any] = {
            "policy": {"name": self.policy_name, "hash": self.policy_hash},
            "workspace": self.workspace,
            "calls": [line.to_dict() for line in self.calls],
            "escalations": [line.to_dict() for line in self.escalations],
            "lifts": [line.to_dict() for line in self.lifts],
            "alerts": [line.to_dict() for line in self.alerts],
        }
        if self.other:
            data["other_records"] = [line.to_dict() for line in self.other]
        data.update(chain=chain, verdict=self.verdict.value, other_reasons=list(self.other_reasons))
        if self.extra:
            data["extra"] = dict(self.extra)
        return data

    def render(self) -> str:
        """The YAML document: fixed key order, one line per record and reason."""
        lines = [HEADER]
        for key, value in self.to_dict().items():
            if isinstance(value, list):
                if not value:
                    lines.append(f"{_scalar(key)}: []")
                    continue
                lines.append(f"{_scalar(key)}:")
                lines.extend(f"  - {_flow(item)}" for item in value)
            elif isinstance(value, Mapping) and key == "extra":
                lines.append(f"{_scalar(key)}:")
                lines.extend(f"  {_scalar(k)}: {_flow(v)}" for k, v in value.items())
            else:
                lines.append(f"{_scalar(key)}: {_flow(value)}")
        return "\n".join(lines) + "\n"

    def __str__(self) -> str:
        return self.render()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SessionReport):
            return self.render() == other.render()
        if isinstance(other, str):
            return self.render() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.render())


def _flow(value: Any) -> str:
    """One YAML value on one line (flow style for collections; see :mod:`.report_yaml`)."""
    return flow(value)


def _scalar(key: str) -> str:
    return _flow(key)


# -- building -------------------------------------------------------------------------------------
def build_report(
    harness: AuditedSession, *, extra: Mapping[str, Any] | None = None, output_hashes: bool = True
) -> SessionReport:
    """The report of ``harness``'s session, read from its verified chain.

    ``extra`` fields (from the ``pytest_harness_audit_report_fields`` hook) go under ``extra``,
    keys sorted. With ``output_hashes=False`` calls carry no output hash (for sessions whose
    outputs print machine-specific text such as the absolute workspace path).
    """
    scrub = PathScrubber(harness.root, storage=harness.storage_dir)
    records = harness.records
    chain = harness.verify()
    verdict, reasons = harness.judge()
    positions = {record.record_id: record.position for record in records}
    by_id = {record.record_id: record for record in records}
    line_verdicts = {record.record_id: judge_record(record) for record in records}
    calls: list[CallLine] = []
    escalations: list[EscalationLine] = []
    lifts: list[LiftLine] = []
    alerts: list[AlertLine] = []
    other: list[OtherLine] = []
    for record in records:
        if record.kind in ("call", "message"):
            calls.append(_call_line(record, scrub, output_hashes, line_verdicts))
            alerts.extend(AlertLine(record.position, record.tool, alert) for alert in record.alerts)
        elif record.kind == "escalation":
            escalations.append(_escalation_line(record, positions, line_verdicts))
        elif record.kind == "lift":
            lifts.append(_lift_line(record, scrub))
        else:
            reason = line_verdicts[record.record_id]
            other.append(
                OtherLine(
                    record.position,
                    record.kind,
                    record.tool,
                    None if reason is None else reason.verdict,
                )
            )
    problem = None
    if not chain.valid:
        problem = f"{chain.reason} at record {chain.first_bad_index}"
    return SessionReport(
        policy_name=harness.policy.name,
        policy_hash=harness.policy.content_hash[:SHORT_HASH],
        workspace=workspace_label(harness.template),
        calls=tuple(calls),
        escalations=tuple(escalations),
        lifts=tuple(lifts),
        alerts=tuple(alerts),
        other=tuple(other),
        chain_valid=chain.valid,
        chain_records=chain.record_count,
        chain_problem=problem,
        verdict=verdict,
        other_reasons=tuple(
            _reason_text(reason, by_id, positions, scrub)
            for reason in _not_on_a_line(reasons, line_verdicts.values())
        ),
        extra=_plain_extra(extra or {}, scrub),
        head=_published_head(harness, chain),
    )


def _published_head(harness: AuditedSession, chain: ChainReport) -> Head | None:
    """The session's published head (``Harness.published_head``: checked against what its own
    process wrote); for a session read back from its store, the verified chain's head."""
    published = getattr(harness, "published_head", None)
    if callable(published):
        head = published()
        return head if isinstance(head, Head) else None
    return Head(chain.record_count, chain.head) if chain.valid else None


def workspace_label(template: str | os.PathLike[str] | None) -> str:
    """The template's name: a shipped template as named, a directory by its last part."""
    if template is None:
        return "empty"
    text = str(template)
    if "/" in text or os.sep in text:
        return Path(text).name or text
    return text


def clean_target(record: CallRecord, scrub: PathScrubber) -> str | None:
    """The record's display target, computed from its full target with paths made relative.

    Truncation comes after scrubbing, so where the cut falls does not depend on the length of
    the temporary directory's path.
    """
    full = record.target
    return None if full is None else display_target(scrub(full))


def _line_verdict(
    record: CallRecord, line_verdicts: Mapping[str, VerdictReason | None]
) -> Verdict | None:
    reason = line_verdicts.get(record.record_id)
    return None if reason is None else reason.verdict


def _not_on_a_line(
    reasons: Iterable[VerdictReason], shown: Iterable[VerdictReason | None]
) -> list[VerdictReason]:
    """The reasons the record lines do not already show (each shown one is taken once)."""
    remaining = Counter(reason for reason in shown if reason is not None)
    others = []
    for reason in reasons:
        if remaining[reason] > 0:
            remaining[reason] -= 1
        else:
            others.append(reason)
    return others


def _call_line(
    record: CallRecord,
    scrub: PathScrubber,
    output_hashes: bool,
    line_verdicts: Mapping[str, VerdictReason | None],
) -> CallLine:
    social = record.raw.get("social")
    social = social if isinstance(social, Mapping) else {}
    firewall = record.raw.get("firewall")
    output = record.output_hash if output_hashes and not social else None
    return CallLine(
        position=record.position,
        tool=record.tool,
        category=record.category,
        target=clean_target(record, scrub),
        decision=record.decision,
        rule=record.rule_id,
        status=record.status,
        output=output[:SHORT_HASH] if output else None,
        dry_run=record.decision == "deny" and not record.enforced,
        quarantined=record.quarantined,
        firewall=str(firewall["decision"])
        if isinstance(firewall, Mapping) and firewall.get("decision") is not None
        else None,
        outcome=_optional_text(social.get("outcome")),
        refusal=_optional_text(social.get("reason")),
        verdict=_line_verdict(record, line_verdicts),
    )


def _optional_text(value: object) -> str | None:
    return None if value is None else str(value)


def _escalation_line(
    record: CallRecord,
    positions: Mapping[str, int],
    line_verdicts: Mapping[str, VerdictReason | None],
) -> EscalationLine:
    immune = record.raw.get("immune", {})
    scope = str(immune.get("scope", "session"))
    if immune.get("scopeValue") is not None:
        scope = f"{scope}:{immune['scopeValue']}"
    score = immune.get("score")
    return EscalationLine(
        position=record.position,
        level=str(immune.get("level")),
        trigger=str(immune.get("trigger")),
        score=round(float(score), 3) if isinstance(score, (int, float)) else None,
        scope=scope,
        evidence=tuple(
            positions.get(str(item), "unknown") for item in immune.get("evidence") or ()
        ),
        verdict=_line_verdict(record, line_verdicts),
    )


def _lift_line(record: CallRecord, scrub: PathScrubber) -> LiftLine:
    immune = record.raw.get("immune", {})
    scopes = []
    for lifted in immune.get("lifted") or ():
        scope = str(lifted.get("scope", "session"))
        if lifted.get("scopeValue") is not None:
            scope = f"{scope}:{lifted['scopeValue']}"
        scopes.append(scope)
    previous = immune.get("previousLevel")
    return LiftLine(
        record.position,
        None if previous is None else str(previous),
        tuple(scopes),
        scrub(str(immune.get("reason", ""))),
    )


def _reason_text(
    reason: VerdictReason,
    records: Mapping[str, CallRecord],
    positions: Mapping[str, int],
    scrub: PathScrubber,
) -> str:
    """``FAIL: audit chain invalid: …``; a reason about a record names its position (never its
    random id), and a record description in it is rebuilt from the scrubbed target."""
    text = reason.text
    record = records.get(reason.record_id) if reason.record_id else None
    if record is not None and record.recorded_target is not None:
        cleaned = CallRecord({**record.raw, "target": clean_target(record, scrub)})
        text = text.replace(record.describe(), cleaned.describe())
    where = ""
    if reason.record_id:
        where = f" (#{positions.get(reason.record_id, 'unknown')})"
    return f"{reason.verdict.value}: {scrub(text)}{where}"


def _plain_extra(extra: Mapping[str, Any], scrub: PathScrubber) -> dict[str, Any]:
    return {str(key): _plain(extra[key], scrub) for key in sorted(extra, key=str)}


def _plain(value: Any, scrub: PathScrubber) -> Any:
    """``value`` as YAML-safe plain data: sorted mappings, lists, scrubbed strings."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        return _plain_extra(value, scrub)
    if isinstance(value, (list, tuple)):
        return [_plain(item, scrub) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(item, scrub) for item in value), key=repr)
    return scrub(str(value))


def merge_report_fields(results: Iterable[Mapping[str, Any] | None]) -> dict[str, Any]:
    """Merge the answers of ``pytest_harness_audit_report_fields`` (``None`` answers skipped)."""
    merged: dict[str, Any] = {}
    for fields in results:
        if fields:
            merged.update(fields)
    return merged


# -- report files ---------------------------------------------------------------------------------
def report_path(storage_dir: str | os.PathLike[str], session_id: str) -> Path:
    """Where the report file of ``session_id`` lives: ``<storage>/reports/<session>.yaml``."""
    return Path(storage_dir) / REPORTS_DIR / f"{sanitize_session_id(session_id)}.yaml"


def write_report(
    storage_dir: str | os.PathLike[str],
    session_id: str,
    report: SessionReport,
    *,
    head: Head | None = None,
) -> Path:
    """Write (atomically) the rendered report of ``session_id``; return its path.

    ``head`` (default: the report's own, the session's published head) the file ends with it,
    after the document: ``head: {records: N, hash: HEX}`` under a ``HEAD_MARK`` line.
    """
    path = report_path(storage_dir, session_id)
    text = report.render()
    head = head if head is not None else report.head
    if head is not None:
        name = sanitize_session_id(session_id)
        re_check = f"harness-audit audit verify {name} --head {head.count}:{head.hash}"
        fields = {"records": head.count, "hash": head.hash}
        text += f"{HEAD_MARK} (re-check: {re_check})\nhead: {_flow(fields)}\n"
    replace_file(path, text.encode("utf-8"), mode=0o600)
    return path


def split_report_file(text: str) -> tuple[str, Head | None]:
    """A report file's document (what snapshots compare) and its published head, if any."""
    document, mark, rest = text.partition(f"\n{HEAD_MARK}")
    if not mark:
        return text, None
    data = yaml.safe_load(rest.partition("\n")[2]) or {}
    fields = data.get("head") if isinstance(data, Mapping) else None
    if not isinstance(fields, Mapping):
        return document + "\n", None
    count, digest = fields.get("records"), fields.get("hash")
    if isinstance(count, bool) or not isinstance(count, int) or not isinstance(digest, str):
        return document + "\n", None
    return document + "\n", Head(count, digest)


def load_report_head(storage_dir: str | os.PathLike[str], session_id: str) -> Head | None:
    """The head published in ``session_id``'s report file (``None``: no file, or no head)."""
    text = load_report_text(storage_dir, session_id)
    return None if text is None else split_report_file(text)[1]


def load_report_text(storage_dir: str | os.PathLike[str], session_id: str) -> str | None:
    """The report file of ``session_id`` as written under ``--harness-audit``, or ``None`` when
    that session has no report file."""
    try:
        return report_path(storage_dir, session_id).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
