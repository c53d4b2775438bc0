"""The idempotency ledger: a keyed send runs once; a retry replays its retained outcome.

A send with an ``idempotency_key`` is written to the store as ``pending`` before it runs and
``returned`` with its outcome (result or typed error) when it ends. Sending the same key again
replays that outcome without sending; with a different input it is an ``idempotency-conflict``.
The same input while the call is in flight on another thread of this endpoint joins it: it waits
for the outcome and replays it. Still pending otherwise (a call of this thread in flight, or an
earlier endpoint's left ``indeterminate``), the outcome is unknown (``outcome-unknown``).
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from pytest_harness_audit.social.deadline_clock import DeadlineClock
from pytest_harness_audit.social.errors import (
    CollectiveError,
    SendError,
    SocialConfigError,
    error_from_json,
    error_to_json,
)
from pytest_harness_audit.social.events import FAILURE_DELIVERIES, SendResult
from pytest_harness_audit.social.inputs import SendInput
from pytest_harness_audit.social.message_json import lone_surrogate_index
from pytest_harness_audit.social.store import PostStore

MAXIMUM_IDEMPOTENCY_KEY_BYTES = 128


def check_idempotency_key(key: object) -> str:
    """Return ``key`` if it is a valid idempotency key (1–128 UTF-8 bytes, no NUL)."""
    if (
        not isinstance(key, str)
        or lone_surrogate_index(key) is not None
        or not 1 <= len(key.encode()) <= MAXIMUM_IDEMPOTENCY_KEY_BYTES
        or "\0" in key
    ):
        raise SocialConfigError(
            f"idempotency key {key!r} is invalid: use 1 to {MAXIMUM_IDEMPOTENCY_KEY_BYTES} "
            "UTF-8 bytes without NUL"
        )
    return key


def check_send_options(failure_delivery: object, idempotency_key: object) -> None:
    """Refuse runtime send options that are not ``result``/``inbound`` and a valid key."""
    if failure_delivery not in FAILURE_DELIVERIES:
        raise SocialConfigError(
            f"failure_delivery must be 'result' or 'inbound', got {failure_delivery!r}"
        )
    if idempotency_key is not None:
        check_idempotency_key(idempotency_key)


def retained_input(decoded: SendInput) -> str:
    """The form a keyed send's input is retained and compared in."""
    return json.dumps(decoded.to_json(), sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Replay:
    """What a repeated key gives back instead of sending: the retained result, or a failure."""

    result: SendResult | None = None
    failure: SendError | CollectiveError | None = None


class IdempotencyLedger:
    """The keyed sends of one post store (see the module docstring)."""

    def __init__(self, store: PostStore, clock: DeadlineClock, lock: threading.RLock) -> None:
        self.store = store
        self.clock = clock
        #: The endpoint's lock: :meth:`begin` is called holding it, and waits on it to join.
        self._settled = threading.Condition(lock)
        #: Keys of the calls in flight, and the thread running each.
        self._in_flight: dict[str, int] = {}

    def read(self, key: str) -> dict[str, object]:
        """The state of a keyed send: ``{state: "absent"}``, ``{state: "pending" |
        "indeterminate", input}`` or ``{state: "returned", input, outcome: {success: result} |
        {failure: error}}``."""
        record = self.store.invocation(check_idempotency_key(key))
        if record is None:
            return {"state": "absent"}
        data: dict[str, object] = {"state": record.state, "input": json.loads(record.input)}
        if record.state == "returned" and record.outcome is not None:
            outcome = record.outcome
            data["outcome"] = (
                {"success": outcome["result"]}
                if "result" in outcome
                else {"failure": outcome.get("error")}
            )
        return data

    def begin(self, key: str, decoded: SendInput) -> Replay | None:
        """Start the keyed send of ``decoded``; a :class:`Replay` when ``key`` was used before
        (once the call in flight with it, if any, has ended). Called holding the endpoint's lock;
        :meth:`settle` ends the call."""
        canonical_input = retained_input(decoded)
        record = self.store.invocation(key)
        me = threading.get_ident()
        same = record is not None and record.input == canonical_input
        if same and self._in_flight.get(key, me) != me:  # join the call in flight
            self._settled.wait_for(lambda: key not in self._in_flight)
            record = self.store.invocation(key)
        if record is None:
            self.store.begin_invocation(key, canonical_input, self.clock.now_ms())
            self._in_flight[key] = threading.get_ident()
            return None
        if record.input != canonical_input:
            return Replay(failure=SendError("idempotency-conflict"))
        outcome = record.outcome
        if record.state != "returned" or outcome is None:
            return Replay(failure=SendError("outcome-unknown"))
        try:
            if "result" in outcome:
                return Replay(SendResult.from_json(cast(Mapping[str, object], outcome["result"])))
            return Replay(failure=error_from_json(cast(Mapping[str, object], outcome["error"])))
        except (KeyError, TypeError, ValueError):
            return Replay(failure=SendError("outcome-unknown"))

    def settle(self, key: str | None) -> None:
        """The call of ``key`` begun by this thread ended: calls waiting to join it go on."""
        if key is not None and self._in_flight.get(key) == threading.get_ident():
            del self._in_flight[key]
            self._settled.notify_all()

    def returned(self, key: str | None, result: SendResult) -> None:
        """Retain the result of the keyed send ``key`` (nothing without a key)."""
        if key is not None:
            self.store.finish_invocation(key, {"result": result.to_json()}, self.clock.now_ms())

    def failed(self, key: str | None, error: SendError | CollectiveError) -> None:
        """Retain the typed failure of ``key``; a failure that cannot be retained replays as
        ``outcome-unknown`` (the row stays pending)."""
        if key is None:
            return
        with contextlib.suppress(sqlite3.Error):
            self.store.finish_invocation(key, {"error": error_to_json(error)}, self.clock.now_ms())

    def forget(self, key: str | None) -> None:
        """Drop ``key`` (a firewall refusal is not retained: a retry is checked again)."""
        if key is not None:
            self.store.forget_invocation(key)
