"""Filtering records: tool, category, status, target glob, time, last N."""

from __future__ import annotations

import datetime as _dt
import re
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from pytest_harness_audit.audit.clock import parse_since, parse_timestamp
from pytest_harness_audit.audit.records import STATUSES
from pytest_harness_audit.errors import UsageError
from pytest_harness_audit.policy.glob import translate_glob


@dataclass(frozen=True)
class RecordFilter:
    """Criteria for ``filter_records``; ``None`` means "any". ``limit`` keeps the last N."""

    tool: str | None = None
    category: str | None = None
    status: str | None = None
    target: str | None = None
    since: str | None = None
    limit: int | None = None
    kind: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise UsageError(f"--status: must be one of {', '.join(STATUSES)}, got {self.status!r}")
        if self.limit is not None and self.limit < 0:
            raise UsageError(f"--limit: must be zero or more, got {self.limit}")


def record_status(record: dict[str, Any]) -> str | None:
    """``result.status`` of a record, if present."""
    result = record.get("result")
    status = result.get("status") if isinstance(result, dict) else None
    return status if isinstance(status, str) else None


def record_target(record: dict[str, Any]) -> str | None:
    """The record's display target (top level, else ``request.target``)."""
    target = record.get("target")
    if isinstance(target, str):
        return target
    request = record.get("request")
    target = request.get("target") if isinstance(request, dict) else None
    return target if isinstance(target, str) else None


def filter_records(
    records: Iterable[dict[str, Any]],
    criteria: RecordFilter,
    *,
    now: _dt.datetime | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the records matching ``criteria`` (all given criteria must hold), oldest first.

    ``target`` is a glob (``*``, ``?``, ``**``, ``**/``) matched against the whole display target;
    records without target never match it. ``since`` takes ``30s``/``5m``/``2h``/``1d`` or an ISO
    timestamp; records without a readable timestamp never match it.
    """
    cutoff = parse_since(criteria.since, now=now) if criteria.since is not None else None
    pattern = (
        re.compile(translate_glob(criteria.target).regex, re.DOTALL)
        if criteria.target is not None
        else None
    )

    def matches(record: dict[str, Any]) -> bool:
        if criteria.tool is not None and record.get("tool") != criteria.tool:
            return False
        if criteria.category is not None and record.get("category") != criteria.category:
            return False
        if criteria.kind is not None and record.get("kind", "call") != criteria.kind:
            return False
        if criteria.status is not None and record_status(record) != criteria.status:
            return False
        if pattern is not None:
            target = record_target(record)
            if target is None or pattern.fullmatch(target) is None:
                return False
        if cutoff is not None:
            stamp = record.get("timestamp")
            moment = parse_timestamp(stamp) if isinstance(stamp, str) else None
            if moment is None or moment < cutoff:
                return False
        return True

    selected = (record for record in records if matches(record))
    if criteria.limit is None:
        yield from selected
    else:
        yield from deque(selected, maxlen=criteria.limit)
