"""The chain follower: the session state that spans calls, rebuilt from the chain.

Several processes may gate calls into one session (a test and its MCP proxy, or one hook
process per call). The immune ladder and the ``rateLimit`` counters therefore follow the chain:
before deciding, a gate replays the records others appended since it last looked (one pass for
both), so every process counts every call of the session.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import orjson

from pytest_harness_audit.audit.chain import AuditChain
from pytest_harness_audit.audit.clock import parse_timestamp
from pytest_harness_audit.audit.tags import parse_tags
from pytest_harness_audit.gate.approvals import immune_decision
from pytest_harness_audit.immune import CallEvent, ImmuneLadder
from pytest_harness_audit.immune.records import Escalation, Lift
from pytest_harness_audit.policy.ratelimit import RateHits, SlidingWindowCounter


class ChainFollower:
    """Replays the chain's records into a ladder and a rate counter, skipping our own.

    ``rate_windows``: the rate-limited rules by id with their windows (ms). Only a ladder or
    rate limits need other processes' records; with neither, nothing is ever read.
    """

    def __init__(
        self,
        chain: AuditChain,
        ladder: ImmuneLadder | None,
        rate_counter: SlidingWindowCounter,
        rate_windows: Mapping[str, float],
        clock: Callable[[], float],
    ) -> None:
        self.chain = chain
        self.ladder = ladder
        self.rate_counter = rate_counter
        self.rate_windows = dict(rate_windows)
        self.clock = clock
        self._follow = ladder is not None or bool(self.rate_windows)
        #: Leading records whose effects our state holds (our own included).
        self._seen_records = 0
        # The next chain line to read and its byte offset. Reading lags behind our own records
        # until another process appends (a session with one writer never reads): the lines
        # from ``_read_index`` up to ``_seen_records`` are always our own.
        self._read_index = 0
        self._read_offset = 0
        #: The lifts other processes recorded, in chain order (:mod:`.lift_watch`).
        self.foreign_lifts: list[Lift] = []

    def sync(self) -> None:
        """Replay the records other processes appended since we last looked."""
        if not self._follow:
            return
        count = self.chain.record_count
        if count != self._seen_records:
            self._replay(count)

    def appended(self, record: Mapping[str, Any]) -> None:
        """Note a record we appended: catch up with others' records before it, skip it later."""
        if not self._follow:
            return
        position = int(record["provenance"]["actionIndex"])
        if position > self._seen_records:
            self._replay(position)
        self._seen_records = position + 1

    def add_rate_hits(self, hits: RateHits) -> None:
        """Count hits decided elsewhere whose record is not in the chain yet."""
        now_ms = self.clock() * 1000.0
        for rule_id in hits.rule_ids:
            window = self.rate_windows.get(rule_id)
            if window is not None and hits.at * 1000.0 > now_ms - window:
                self.rate_counter.add(rule_id, hits.at)

    def _replay(self, stop: int) -> None:
        """Apply the records before position ``stop`` not applied yet, skipping our own."""
        ladder = self.ladder
        windows = self.rate_windows
        now_ms = self.clock() * 1000.0
        own_until = self._seen_records
        for index, record in self._read_until(stop):
            if index < own_until or record is None:
                continue
            if ladder is not None:
                entry = immune_entry(record)
                if entry is not None:
                    ladder.apply(entry)
                    if isinstance(entry, Lift):
                        self.foreign_lifts.append(entry)
            if windows:
                self._count_rate_hits(record, windows, now_ms)
        self._seen_records = max(self._seen_records, self._read_index)

    def _read_until(self, stop: int) -> Iterator[tuple[int, dict[str, Any] | None]]:
        """``(position, record)`` of the chain lines not read yet, up to ``stop`` (excluded).

        A line that is not a JSON object still takes its position (its record is ``None``).
        """
        if self._read_index >= stop:
            return
        try:
            handle = open(self.chain.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return
        with handle:
            handle.seek(self._read_offset)
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # a write in progress
                index = self._read_index
                self._read_index = index + 1
                self._read_offset += len(line)
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError:
                    # orjson refuses escaped lone surrogates, which the writer may produce
                    try:
                        record = json.loads(line)
                    except ValueError:
                        record = None
                yield index, record if isinstance(record, dict) else None
                if self._read_index >= stop:
                    return

    def _count_rate_hits(
        self, record: Mapping[str, Any], windows: Mapping[str, float], now_ms: float
    ) -> None:
        """Add another gate's ``rateHits`` to our counter (the ones still inside a window)."""
        rule_ids = record.get("rateHits")
        if not rule_ids or not isinstance(rule_ids, list):
            return
        at = record.get("rateClock", record.get("clock"))
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            return
        for rule_id in rule_ids:
            window = windows.get(rule_id) if isinstance(rule_id, str) else None
            if window is not None and at * 1000.0 > now_ms - window:
                self.rate_counter.add(rule_id, at)


def immune_entry(record: Mapping[str, Any]) -> CallEvent | Escalation | Lift | None:
    """The immune ladder's view of a chain record (``None`` for records it ignores)."""
    kind = record.get("kind", "call")
    if kind == "escalation":
        return Escalation.from_dict(record["immune"])
    if kind == "lift":
        return Lift.from_dict(record["immune"])
    if kind != "call":
        return None
    tags = parse_tags(record.get("rules", {}).get("constraints", []))
    return CallEvent(
        record_id=str(record["recordId"]),
        tool=str(record["tool"]),
        category=str(record["category"]),
        input_hash=str(record["request"]["inputHash"]),
        decision=immune_decision(tags.decision or "allow", record["result"]["status"]),  # type: ignore[arg-type]
        enforced=tags.enforced,
        status=record["result"]["status"],
        alerts=tuple(record.get("alerts", ())),
        timestamp=float(record["clock"])
        if "clock" in record
        else _timestamp_seconds(str(record.get("timestamp", ""))),
    )


def _timestamp_seconds(stamp: str) -> float:
    parsed = parse_timestamp(stamp)
    return parsed.timestamp() if parsed is not None else 0.0
