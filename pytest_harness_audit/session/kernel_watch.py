"""A session whose credential files the kernel cannot watch says so in its chain.

Where Linux's inotify exists, the kernel tells which of the workspace's secret-bearing files a
call read (:mod:`pytest_harness_audit.inspect.credential_reads`): a script, a build step or a
computed name reads ``.env`` in ways no command text shows. Its instances and watches are
limited per user (``fs.inotify.max_user_instances``, ``max_user_watches``); when they are used
up (a large parallel run, or a process keeping hundreds open) the watch cannot be set up and
such reads go unseen. The session then starts with a ``note`` (tool :data:`READS_UNWATCHED`)
judged WARN that says why, so no verdict passes over the missing check in silence. A system
without inotify at all (macOS) has no such check to lose, and records nothing.
"""

from __future__ import annotations

from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.inspect.inotify import inotify_libc

#: The tool of the note.
READS_UNWATCHED = "CredentialReadsUnwatched"
#: Why it is a WARN.
UNWATCHED_REASON = (
    "the kernel could not watch the workspace's credential files (inotify instances or watches "
    "used up: fs.inotify.max_user_instances, fs.inotify.max_user_watches): a file read by a "
    "route a call's text does not show goes unseen in this session"
)


def note_unwatched_reads(gate: Gate, inspector: Inspector) -> bool:
    """Record the note when ``inspector`` (made to watch the workspace live) learned secrets
    but has no kernel watch of their files on a system with inotify; whether it did."""
    if inspector.credential_reads is not None or not len(inspector.secrets):
        return False
    if inotify_libc() is None:
        return False
    judged = {"verdict": "WARN", "reason": UNWATCHED_REASON, "caughtBy": "effect"}
    decision = gate.unjudged(READS_UNWATCHED, "inspection", {}, target=None, kind="note")
    gate.run(
        READS_UNWATCHED,
        {},
        lambda _decision: Outcome.success(extra={"judged": judged}),
        decision=decision,
    )
    return True
