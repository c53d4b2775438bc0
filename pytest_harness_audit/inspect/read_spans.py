"""The spans of the credential-read watch (:mod:`.credential_reads`): what each call's span
holds, and which span an event of the kernel goes to when several are open at once (calls made
in parallel through the proxy, inside an agent's run).

The kernel names no reader. An open goes to a span whose call is known to open that file (a
search's budget, :data:`Budget`) while it has opens left, and what is read or closed while it
is open follows it; every other event goes to the span opened last.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Container, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from pytest_harness_audit.inspect.inotify import (
    IN_CLOSE_NOWRITE,
    IN_CLOSE_WRITE,
    IN_OPEN,
    IN_Q_OVERFLOW,
)

#: A span keeping more events than this counts every watched file as read (as an overflow).
MAX_SPAN_EVENTS = 1 << 16
#: How often a call opens each of the watched files it is given, by path (the files of
#: :attr:`~.CredentialReadWatch.watched_files`); ``None``: no budget. Called between the
#: watch's hold and its reset: what it opens itself is the auditor's own.
Budget: TypeAlias = "Callable[[tuple[str, ...]], Mapping[str, int] | None] | None"


class LastTake(threading.local):
    """What a thread's last :meth:`CredentialReadWatch.take` saw (each thread its own: calls
    made at once are judged each on its own span)."""

    def __init__(self) -> None:
        self.opens: dict[str, int] = {}
        self.unopened: frozenset[str] = frozenset()
        self.stored: tuple[str, ...] = ()
        self.stored_opens: dict[str, int] = {}  # each stored object read → its opens
        self.held: frozenset[str] = frozenset()
        self.concurrent = False


@dataclass
class Span:
    """One open span: the auditor's copies counted when it opened, how often its call may open
    each file (``budget``) and has (``spent``), whether it holds calls (``container``) and ran
    beside another call's span (``concurrent``), the opens of each watch charged to the budget
    and not closed yet, and its events so far."""

    own: dict[str, int]
    budget: dict[str, int] = field(default_factory=dict)
    container: bool = False
    concurrent: bool = False
    spent: dict[str, int] = field(default_factory=dict)
    open_fds: dict[int, int] = field(default_factory=dict)
    events: list[tuple[int, int, str]] = field(default_factory=list)

    def spend(self, relative: str) -> bool:
        """Whether one more open of ``relative`` is within the budget (it is then spent)."""
        spent = self.spent.get(relative, 0)
        if spent >= self.budget.get(relative, 0):
            return False
        self.spent[relative] = spent + 1
        return True

    def add(self, event: tuple[int, int, str]) -> None:
        """Keep ``event``; past :data:`MAX_SPAN_EVENTS`, what happened can no longer be told."""
        if len(self.events) >= MAX_SPAN_EVENTS:
            self.events = [(-1, IN_Q_OVERFLOW, "")]
        else:
            self.events.append(event)


def route(
    spans: list[Span],
    events: list[tuple[int, int, str]],
    watched: Mapping[int, str],
    folders: Container[int],
) -> None:
    """Add inotify ``events`` to the open ``spans`` (in the order they opened; one at least):
    an open of a watched file (``watched``: each watch's path; ``folders``: the watches of
    folders) to the latest span with budget left for it (an earlier one may run longer), and
    what is read or closed while it is open to that span; any other event to the span opened
    last; an overflow to every span."""
    last = spans[-1]
    for event in events:
        wd, mask, _name = event
        relative = watched.get(wd) if wd not in folders else None
        if mask & IN_Q_OVERFLOW:
            for span in spans:
                span.add(event)
        elif relative is None:
            last.add(event)
        elif mask & IN_OPEN:
            owner = next((s for s in reversed(spans) if s.spend(relative)), None)
            if owner is None:
                last.add(event)
            else:
                owner.open_fds[wd] = owner.open_fds.get(wd, 0) + 1
                owner.add(event)
        else:
            owner = next((s for s in reversed(spans) if s.open_fds.get(wd, 0) > 0), last)
            if mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) and wd in owner.open_fds:
                owner.open_fds[wd] -= 1
            owner.add(event)
