"""Social Harness spec sentences of the message firewall's evidence revisions, one test each.

Spec ("Stock host projection"): "With the experimental message firewall, a multicast is checked
after exact membership resolution and before intent creation. The evidence revision comparison,
retained assessment and intent binding commit atomically. One stale capture is checked again;
another is held in enforcement mode. Guidance mode records that hold and allows the original
send without stale advice. Inference holds neither the SQLite transaction nor the
engine/delivery lock."
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_harness_audit.social import (
    FirewallSendError,
    ManualClock,
    MessageFirewall,
    MessageRule,
    SendError,
    SocialEndpoint,
    SocialEvent,
)
from pytest_harness_audit.social.capture import HOLD_FEEDBACK, HOLD_REFUSAL

CAREFUL = MessageRule("careful", "guide", reason="mind the tone")


class MovingEvidence:
    """A secret scanner during whose first ``moves`` checks another thread notes new evidence:
    the capture of each of those checks is stale by the time its intent would be bound."""

    def __init__(self, firewall: MessageFirewall, moves: int) -> None:
        self.firewall = firewall
        self.moves = moves
        self.checks = 0
        self.lock_free: list[bool] = []
        #: Set to the endpoint's database to probe, during each check, that no transaction is open.
        self.store_path: Path | None = None
        self.store_free: list[bool] = []

    def __call__(self, text: str) -> list[str]:
        self.checks += 1
        if self.store_path is not None:
            probe = sqlite3.connect(self.store_path, timeout=0.5, isolation_level=None)
            try:
                probe.execute("BEGIN IMMEDIATE")
                probe.execute("ROLLBACK")
                self.store_free.append(True)
            except sqlite3.OperationalError:
                self.store_free.append(False)
            finally:
                probe.close()
        if self.checks <= self.moves:
            # inference holds no lock: another thread can note evidence meanwhile
            noted = threading.Thread(target=self.firewall.note_evidence)
            noted.start()
            noted.join(timeout=10)
            self.lock_free.append(not noted.is_alive())
        return []


def firewall_with(mode: str, moves: int) -> tuple[MessageFirewall, MovingEvidence]:
    firewall = MessageFirewall([CAREFUL], mode=mode)  # type: ignore[arg-type]
    scanner = MovingEvidence(firewall, moves)
    firewall.secret_scanner = scanner
    return firewall, scanner


@pytest.fixture
def make(tmp_path: Path) -> Iterator[object]:
    made: list[SocialEndpoint] = []

    def build(firewall: MessageFirewall, events: list[SocialEvent]) -> SocialEndpoint:
        endpoint = SocialEndpoint(
            tmp_path / f"s{len(made)}",
            "alice",
            ("bob", "carol"),
            firewall=firewall,
            clock=ManualClock(start_ms=1_000),
            on_event=events.append,
        )
        made.append(endpoint)
        return endpoint

    yield build
    for endpoint in made:
        endpoint.close()


def retained(endpoint: SocialEndpoint) -> list[dict[str, object]]:
    with sqlite3.connect(endpoint.store.path) as connection:
        rows = connection.execute("SELECT body FROM checks ORDER BY rowid").fetchall()
    return [json.loads(row[0]) for row in rows]


def test_a_check_records_the_revision_of_the_evidence_it_assessed(make: object) -> None:
    firewall = MessageFirewall([CAREFUL])
    events: list[SocialEvent] = []
    endpoint = make(firewall, events)  # type: ignore[operator]
    assert firewall.evidence_revision == 0
    firewall.note_secret("sk-live-0123456789", ".env")
    firewall.note_evidence()
    result = endpoint.send("agent:bob", "hello")
    assert result.guidance is not None
    (check,) = retained(endpoint)
    assert check["evidenceRevision"] == 2 == firewall.evidence_revision
    assert check["checkId"] == result.guidance.check_id
    assert "held" not in check


def test_a_repeat_secret_moves_no_revision() -> None:
    firewall = MessageFirewall()
    assert firewall.note_secret("sk-live-0123456789", ".env")
    assert not firewall.note_secret("sk-live-0123456789", ".env")
    assert not firewall.note_secret("short", ".env")
    assert firewall.evidence_revision == 1


def test_one_stale_capture_is_checked_again(make: object) -> None:
    firewall, scanner = firewall_with("enforcement", moves=1)
    events: list[SocialEvent] = []
    endpoint = make(firewall, events)  # type: ignore[operator]
    result = endpoint.send("agent:bob", "hello")
    assert scanner.checks == 2
    assert [post.text for post in endpoint.posts()] == ["hello"]
    (bound,) = retained(endpoint)  # the stale capture's check was never bound; the second was
    assert bound["evidenceRevision"] == 1 == firewall.evidence_revision
    assert "held" not in bound
    assert result.guidance is not None and result.guidance.check_id == bound["checkId"]
    assert result.guidance.advice == "mind the tone"
    assert events[-1].check_id == bound["checkId"]


def test_another_stale_capture_is_held_in_enforcement_mode(make: object) -> None:
    firewall, scanner = firewall_with("enforcement", moves=2)
    events: list[SocialEvent] = []
    endpoint = make(firewall, events)  # type: ignore[operator]
    with pytest.raises(FirewallSendError) as held:
        endpoint.send("agent:bob", "hello")
    assert held.value.refusal == HOLD_REFUSAL
    assert held.value.feedback == HOLD_FEEDBACK
    assert scanner.checks == 2  # checked once more, then held: never a third check
    assert endpoint.posts() == []
    (kept,) = retained(endpoint)
    assert kept["checkId"] == held.value.check_id
    assert kept["held"] is True and kept["mode"] == "enforcement"
    assert kept["advice"] is None
    assert events[-1].outcome == "refused" and events[-1].reason == "firewall-refused"
    assert events[-1].check_id == kept["checkId"]


def test_guidance_mode_records_the_hold_and_sends_without_stale_advice(make: object) -> None:
    firewall, scanner = firewall_with("guidance", moves=2)
    events: list[SocialEvent] = []
    endpoint = make(firewall, events)  # type: ignore[operator]
    result = endpoint.send("agent:bob", "hello")
    assert result.guidance is None  # the stale advice is not given
    assert result.to_mcp() == {}
    assert [post.text for post in endpoint.posts()] == ["hello"]  # the original send
    (kept,) = retained(endpoint)
    assert kept["held"] is True and kept["mode"] == "guidance"
    assert kept["advice"] is None and kept["decision"] == "guide"
    assert scanner.checks == 2
    assert events[-1].guidance is None and events[-1].held
    assert events[-1].to_json()["held"] is True


def test_a_held_send_through_the_gate_is_recorded_as_held(tmp_path: Path) -> None:
    from pytest_harness_audit.doors.social import SocialSession
    from pytest_harness_audit.policy import Policy
    from pytest_harness_audit.session.harness import Harness

    harness = Harness.create(tmp_path / "h", policy=Policy.from_dict({"defaultPolicy": "allow"}))
    firewall, _ = firewall_with("guidance", moves=2)
    session = SocialSession(harness.gate, tmp_path / "social", "alice", ("bob",), firewall=firewall)
    try:
        session.endpoint.send("agent:bob", "hello")
        (record,) = [r for r in harness.records if r.tool == "send_message"]
        assert record.status == "success"
        assert record.raw["firewall"]["held"] is True
        assert record.raw["firewall"]["mode"] == "guidance"
    finally:
        session.close()
        harness.close()


def test_inference_holds_neither_the_sqlite_transaction_nor_the_evidence_lock(
    make: object,
) -> None:
    firewall, scanner = firewall_with("guidance", moves=2)
    endpoint = make(firewall, [])  # type: ignore[operator]
    scanner.store_path = endpoint.store.path
    endpoint.send("agent:bob", "hello")
    assert scanner.lock_free == [True, True]
    assert scanner.store_free == [True, True]


def test_the_comparison_retention_and_binding_commit_atomically(make: object) -> None:
    """A post that cannot be inserted rolls back the retained check with it."""
    firewall = MessageFirewall([CAREFUL])
    endpoint = make(firewall, [])  # type: ignore[operator]
    with sqlite3.connect(endpoint.store.path) as connection:
        connection.execute(
            "CREATE TRIGGER refuse_posts BEFORE INSERT ON posts "
            "BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )
    with pytest.raises(SendError) as failed:
        endpoint.send("agent:bob", "hello")
    assert failed.value.reason == "persistence-failed"
    assert retained(endpoint) == []  # no check retained without its intent
    assert endpoint.posts() == []


def test_evidence_noted_while_an_intent_is_bound_waits_for_its_commit(make: object) -> None:
    firewall = MessageFirewall([CAREFUL])
    endpoint = make(firewall, [])  # type: ignore[operator]
    order: list[str] = []
    with firewall.evidence_lock:
        noter = threading.Thread(target=lambda: order.append(f"noted {firewall.note_evidence()}"))
        noter.start()
        noter.join(timeout=0.2)
        order.append("bound")
    noter.join(timeout=5)
    assert order == ["bound", "noted 1"]
    endpoint.send("agent:bob", "after")
    assert retained(endpoint)[0]["evidenceRevision"] == 1
