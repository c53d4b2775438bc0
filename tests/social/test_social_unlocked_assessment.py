"""The firewall's assessment of a send holds no lock: other sends, deliveries, peers and the
store go on meanwhile.

Spec ("Stock host projection"): "Inference holds neither the SQLite transaction nor the
engine/delivery lock." Each test blocks one send inside its assessment until another thread has
done its work; with a lock held across the assessment, that thread would wait instead.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest
from social_support import SLOT_SCHEMA
from stale_support import ANSWERING, KINDS, DuringCheck, Kind, carries, retained, sent

from pytest_harness_audit.social import (
    CollectiveError,
    MessageFirewall,
    MessageRule,
    SendError,
    SendResult,
    SocialEndpoint,
)

CAREFUL = MessageRule("careful", "guide", reason="mind the tone")


def store_is_free(path: Path) -> bool:
    """Whether another connection can open a write transaction on the store right now."""
    probe = sqlite3.connect(path, timeout=0.5, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return True
    except sqlite3.OperationalError:
        return False
    finally:
        probe.close()


class Paused:
    """Runs ``kind``'s send on a thread that pauses inside its (first) assessment until
    :meth:`resume`."""

    def __init__(self, endpoint: SocialEndpoint, firewall: MessageFirewall, kind: Kind) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()
        self.hook = DuringCheck(self._pause)
        self.results: list[SendResult] = []
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._send, args=(endpoint, kind))
        self.hook.thread = self.thread
        firewall.secret_scanner = self.hook

    def _pause(self) -> None:
        self.entered.set()
        self.released.wait(timeout=10)

    def _send(self, endpoint: SocialEndpoint, kind: Kind) -> None:
        try:
            self.results.append(kind.send(endpoint, "checked slowly"))
        except BaseException as error:  # reported to the test
            self.errors.append(error)

    def start(self) -> None:
        self.thread.start()
        assert self.entered.wait(timeout=10), "the send never reached its assessment"

    def resume(self) -> None:
        self.released.set()
        self.thread.join(timeout=10)
        assert not self.thread.is_alive()


def run_meanwhile(work: object) -> bool:
    """Run ``work`` on another thread; whether it finished while the paused send waits."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            work()  # type: ignore[operator]
        except BaseException as error:  # reported below
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=5)
    finished = not thread.is_alive()
    if failures:
        raise failures[0]
    return finished


@pytest.mark.parametrize("kind", KINDS, ids=str)
def test_others_send_deliver_and_write_while_a_send_is_assessed(
    make_endpoint: object, kind: Kind
) -> None:
    firewall = MessageFirewall([CAREFUL])
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    kind.setup(endpoint)
    dave = endpoint.peer("dave")
    dave.unreachable("delivery-pending")
    with pytest.raises(SendError) as pending:
        endpoint.send("agent:dave", "queued")
    assert pending.value.reason == "delivery-pending"
    paused = Paused(endpoint, firewall, kind)
    paused.start()
    seen: dict[str, object] = {}

    def meanwhile() -> None:
        seen["store free"] = store_is_free(endpoint.store.path)
        dave.reachable()  # delivers the pending post
        seen["delivered"] = [post.status for post in endpoint.posts("agent:dave")]
        seen["nothing left"] = endpoint.deliver_pending()
        seen["sent"] = endpoint.send("agent:dave", "meanwhile")
        seen["asked"] = endpoint.peer("carol").gather("Which day?", SLOT_SCHEMA)
        seen["inbox"] = len(endpoint.inbox())

    finished = run_meanwhile(meanwhile)
    paused.resume()
    assert finished, "another thread waited for the assessment to end"
    assert seen["store free"] is True  # no SQLite transaction is open during the assessment
    assert seen["delivered"] == ["stored"] and seen["nothing left"] == 0
    assert isinstance(seen["sent"], SendResult)
    assert isinstance(seen["asked"], str) and seen["asked"].startswith("col_")
    assert paused.errors == []
    (result,) = paused.results
    assert result.guidance is not None and result.guidance.advice == "mind the tone"
    posts = sent(endpoint)
    assert [post.text for post in posts[:2]] == ["queued", "meanwhile"]
    assert len(posts) == 2 + kind.posts  # the paused send committed last
    assert all(carries(post, "checked slowly") for post in posts[2:])
    assert paused.hook.checks == 1  # nothing the others did changed the evidence


def test_two_sends_are_assessed_at_the_same_time(make_endpoint: object) -> None:
    firewall = MessageFirewall([CAREFUL])
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    paused = Paused(endpoint, firewall, KINDS[0])
    paused.start()
    finished = run_meanwhile(lambda: endpoint.send("agent:carol", "second"))
    paused.resume()
    assert finished
    assert (paused.hook.checks, paused.hook.others) == (1, 1)  # the second was checked meanwhile
    assert [post.text for post in sent(endpoint)] == ["second", "checked slowly"]


@pytest.mark.parametrize("kind", ANSWERING, ids=str)
def test_a_request_answered_while_its_response_is_assessed_is_answered_once(
    make_endpoint: object, kind: Kind
) -> None:
    firewall = MessageFirewall([CAREFUL])
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    kind.setup(endpoint)
    paused = Paused(endpoint, firewall, kind)
    paused.start()
    finished = run_meanwhile(lambda: kind.send(endpoint, "answered first"))
    paused.resume()
    assert finished
    (error,) = paused.errors
    assert isinstance(error, CollectiveError)
    assert error.failure.kind == "request-answered"
    (response,) = [post for post in sent(endpoint) if post.kind == "response"]
    assert carries(response, "answered first")
    assert len(retained(endpoint)) == 2  # both assessments are retained; one bound the answer


def test_through_the_gate_another_send_is_recorded_while_one_is_assessed(tmp_path: Path) -> None:
    from pytest_harness_audit.doors.social import SocialSession
    from pytest_harness_audit.policy import Policy
    from pytest_harness_audit.session.harness import Harness

    harness = Harness.create(tmp_path / "h", policy=Policy.from_dict({"defaultPolicy": "allow"}))
    firewall = MessageFirewall([CAREFUL])
    session = SocialSession(
        harness.gate, tmp_path / "social", "alice", ("bob", "carol"), firewall=firewall
    )
    try:
        paused = Paused(session.endpoint, firewall, KINDS[0])
        paused.start()
        finished = run_meanwhile(lambda: session.endpoint.send("agent:carol", "meanwhile"))
        paused.resume()
        assert finished and paused.errors == []
        sends = [record for record in harness.records if record.tool == "send_message"]
        assert [record.status for record in sends] == ["success", "success"]
        assert [record.raw["social"]["to"] for record in sends] == ["agent:carol", "agent:bob"]
    finally:
        session.close()
        harness.close()


def test_a_keyed_send_repeated_while_it_is_assessed_joins_it(
    make_endpoint: object, events: list[object]
) -> None:
    """Same key, same input, while the first call is in flight: the repeat joins it and replays
    its result; nothing is sent twice. A different input with the key is a conflict at once."""
    firewall = MessageFirewall([CAREFUL])
    endpoint = make_endpoint(firewall=firewall)  # type: ignore[operator]
    keyed = Kind(
        "keyed multicast",
        "multicast",
        1,
        lambda e, text, delivery: e.send("agent:bob", text, idempotency_key="k1"),
    )
    paused = Paused(endpoint, firewall, keyed)
    paused.start()
    with pytest.raises(SendError) as conflict:
        endpoint.send("agent:bob", "another text", idempotency_key="k1")
    assert conflict.value.reason == "idempotency-conflict"
    joined: list[SendResult] = []
    repeat = threading.Thread(
        target=lambda: joined.append(
            endpoint.send("agent:bob", "checked slowly", idempotency_key="k1")
        )
    )
    repeat.start()
    repeat.join(timeout=0.5)
    waiting = repeat.is_alive()  # it waits for the call in flight instead of answering
    paused.resume()
    repeat.join(timeout=10)
    assert waiting and not repeat.is_alive()
    (first,) = paused.results
    assert joined == [first]
    assert [post.text for post in sent(endpoint)] == ["checked slowly"]
    assert paused.hook.checks == 1 and paused.hook.others == 0  # the repeat ran no check
    assert events[-1].to_json()["replayed"] is True  # type: ignore[attr-defined]
