"""Shared pieces of the evidence-revision tests: every send kind the firewall checks, and a hook
that runs code inside a check (after its capture, before its intent is bound)."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass

from social_support import all_gather, gather

from pytest_harness_audit.social import SendResult, SocialEndpoint
from pytest_harness_audit.social.events import FailureDelivery
from pytest_harness_audit.social.store import Post

#: What the spec's hold reads, in enforcement mode (the refusal and the permitted feedback).
HOLD_REFUSAL_TEXT = (
    "the evidence this send was checked against changed again before it could be sent"
)
HOLD_FEEDBACK_TEXT = "send it again to have it checked against the current evidence"
SECRET = "sk-live-0123456789abcdef"
NOTE_SCHEMA: dict[str, object] = {
    "type": "object",
    "properties": {"note": {"type": "string", "maxLength": 200}},
    "required": ["note"],
}
GROUP = "group:bob,carol"


Sender = Callable[[SocialEndpoint, str, FailureDelivery], SendResult]


@dataclass(frozen=True)
class Kind:
    """One kind of send: how to prepare it (``setup``), send a text with it, and how many posts
    of the local agent it makes."""

    name: str
    operation: str
    posts: int
    sender: Sender
    setup: Callable[[SocialEndpoint], object] = lambda endpoint: None

    def __str__(self) -> str:
        return self.name

    def send(
        self, endpoint: SocialEndpoint, text: str, failure_delivery: FailureDelivery = "result"
    ) -> SendResult:
        """Send ``text`` as this kind."""
        return self.sender(endpoint, text, failure_delivery)


def _text(to: str, collective: Callable[[], dict[str, object]] | None = None) -> Sender:
    return lambda endpoint, text, delivery: endpoint.send(
        to, text, None if collective is None else collective(), failure_delivery=delivery
    )


def _answer(to: str) -> Sender:
    return lambda endpoint, text, delivery: endpoint.respond(
        to, {"action": "accept", "content": {"note": text}}, failure_delivery=delivery
    )


KINDS = (
    Kind("direct multicast", "multicast", 1, _text("agent:bob")),
    Kind("group multicast", "multicast", 1, _text(GROUP)),
    Kind("direct gather", "gather", 1, _text("agent:bob", gather)),
    Kind("group gather", "gather", 2, _text(GROUP, gather)),
    Kind("all_gather", "all_gather", 1, _text(GROUP, all_gather)),
    Kind(
        "response to a gather",
        "response",
        1,
        _answer("agent:bob"),
        setup=lambda e: e.peer("bob").gather("Any notes?", NOTE_SCHEMA),
    ),
    Kind(
        "response to an all_gather",
        "response",
        1,
        _answer("group:alice,bob,carol"),
        setup=lambda e: e.peer("bob").all_gather(
            "Any notes?", NOTE_SCHEMA, to="group:alice,bob,carol"
        ),
    ),
)
COLLECTING = tuple(kind for kind in KINDS if kind.operation in ("gather", "all_gather"))
ANSWERING = tuple(kind for kind in KINDS if kind.operation == "response")


def sent(endpoint: SocialEndpoint) -> list[Post]:
    """The local agent's posts, held ones included."""
    return endpoint.posts(sender="alice", include_held=True)


def carries(post: Post, text: str) -> bool:
    """Whether ``post`` carries ``text`` (as its text, or inside its answer)."""
    return post.text == text or text in json.dumps(post.content)


def retained(endpoint: SocialEndpoint) -> list[dict[str, object]]:
    """Every retained check, oldest first, read from the database itself."""
    with sqlite3.connect(endpoint.store.path) as connection:
        rows = connection.execute("SELECT body FROM checks ORDER BY rowid").fetchall()
    return [json.loads(row[0]) for row in rows]


def in_thread(action: Callable[[], object]) -> None:
    """Run ``action`` on another thread and wait for it; it must finish (no lock is held)."""
    failures: list[BaseException] = []

    def run() -> None:
        try:
            action()
        except BaseException as error:  # reported to the test below
            failures.append(error)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "the action waited for a lock the check holds"
    if failures:
        raise failures[0]


class DuringCheck:
    """A firewall secret scanner that runs ``during[i]`` inside the i-th check (after the check
    captured its evidence revision). With ``thread`` set, only that thread's checks count."""

    def __init__(self, *during: Callable[[], object]) -> None:
        self.during = list(during)
        self.checks = 0
        #: Checks other threads ran (when ``thread`` is set).
        self.others = 0
        self.thread: threading.Thread | None = None

    def __call__(self, text: str) -> list[str]:
        if self.thread is not None and threading.current_thread() is not self.thread:
            self.others += 1
            return []
        self.checks += 1
        if self.checks <= len(self.during):
            self.during[self.checks - 1]()
        return []
