"""Timestamps: writing them fast (UTC ISO-8601 with ``Z``) and reading them back."""

from __future__ import annotations

import datetime as _dt
import re
import time

from pytest_harness_audit.errors import UsageError

# The last stamp and the "YYYY-MM-DDTHH:MM:SS" of its second, each with its number (milliseconds,
# seconds) in one tuple: a thread reads a number and its text from the same write.
_last: list[tuple[int, str]] = [(-1, "")]
_second: list[tuple[int, str]] = [(-1, "")]
_time_ns = time.time_ns


def utc_timestamp(now: float | None = None) -> str:
    """Return ``YYYY-MM-DDTHH:MM:SS.mmmZ`` for ``now`` (default: the current time).

    The last stamp and its whole-second prefix are cached: many records share a millisecond.
    """
    millis = _time_ns() // 1_000_000 if now is None else int(now * 1000)
    known, stamp = _last[0]
    if millis == known:
        return stamp
    second = millis // 1000
    known, prefix = _second[0]
    if second != known:
        prefix = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _second[0] = (second, prefix)
    stamp = f"{prefix}.{millis % 1000:03d}Z"
    _last[0] = (millis, stamp)
    return stamp


def parse_timestamp(text: str) -> _dt.datetime | None:
    """Parse an ISO-8601 timestamp into an aware UTC datetime; ``None`` if it is not one.

    Accepts ``Z``, numeric offsets, naive values (taken as UTC) and the ``+00:00Z`` form some
    older writers produced.
    """
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1]
        if not re.search(r"[+-]\d\d:\d\d$", value):
            value += "+00:00"
    try:
        parsed = _dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed.astimezone(_dt.timezone.utc)


_RELATIVE = re.compile(r"^(\d+)\s*(s|m|h|d)$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_since(text: str, *, now: _dt.datetime | None = None) -> _dt.datetime:
    """Turn ``30s`` / ``5m`` / ``2h`` / ``1d`` or an ISO timestamp into an aware UTC cut-off."""
    match = _RELATIVE.match(text.strip())
    if match:
        current = now or _dt.datetime.now(_dt.timezone.utc)
        return current - _dt.timedelta(seconds=int(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    parsed = parse_timestamp(text)
    if parsed is None:
        raise UsageError(
            f"--since: {text!r} is neither a duration (30s, 5m, 2h, 1d) nor an ISO timestamp"
        )
    return parsed


def minute_bucket(timestamp: str) -> str | None:
    """The UTC minute ``YYYY-MM-DDTHH:MM`` of a record timestamp, or ``None`` if unparsable."""
    if len(timestamp) >= 17 and timestamp.endswith("Z") and timestamp[10] == "T":
        head = timestamp[:-1]
        if "+" not in head and head.count("-") == 2:
            return timestamp[:16]
    parsed = parse_timestamp(timestamp)
    return None if parsed is None else parsed.strftime("%Y-%m-%dT%H:%M")
