"""A session whose credential files the kernel cannot watch says so in its chain.

Where Linux's inotify exists, the kernel tells which of the workspace's secret-bearing files a
call read (:mod:`pytest_harness_audit.inspect.credential_reads`): a script, a build step or a
computed name reads ``.env`` in ways no command text shows. Its instances and watches are
limited per user (``fs.inotify.max_user_instances``, ``max_user_watches``); when they are used
up (a large parallel run, or a process keeping hundreds open) the watch cannot be set up and
such reads go unseen; so they do when the workspace is too large to be watched live (more than
:data:`~pytest_harness_audit.inspect.watch.MAX_WATCHES` folders: the credential watch rides on
the live tree). The session then starts with a ``note`` (tool :data:`READS_UNWATCHED`) judged
WARN that says why, so no verdict passes over the missing check in silence. A system without
inotify at all (macOS), or a workspace without credential files, has no such check to lose,
and records nothing.
"""

from __future__ import annotations

from pytest_harness_audit.gate import Gate
from pytest_harness_audit.gate.seam import Outcome
from pytest_harness_audit.inspect import Inspector
from pytest_harness_audit.inspect.inotify import inotify_libc
from pytest_harness_audit.inspect.watch import MAX_WATCHES

#: The tool of the note.
READS_UNWATCHED = "CredentialReadsUnwatched"
#: Why it is a WARN, when the workspace itself is watched but its credential files are not.
UNWATCHED_REASON = (
    "the kernel could not watch the workspace's credential files (inotify instances or watches "
    "used up: fs.inotify.max_user_instances, fs.inotify.max_user_watches): a file read by a "
    "route a call's text does not show goes unseen in this session"
)
#: Why it is a WARN, when the workspace is not watched live at all.
UNWATCHED_TREE_REASON = (
    "the kernel could not watch the workspace (more than {folders} folders, or inotify "
    "instances or watches used up: fs.inotify.max_user_instances, fs.inotify.max_user_watches)"
    ", so its credential files are not watched either: a file read by a route a call's text "
    "does not show goes unseen in this session"
)


def unwatched_reason(inspector: Inspector) -> str | None:
    """Why ``inspector``'s credential files go unwatched on a system with inotify (``None``:
    they are watched, there are none, or the system has no inotify: no check was lost)."""
    if inspector.credential_reads is not None or not inspector.credential_files:
        return None
    if inotify_libc() is None:
        return None
    if not inspector.live:
        return UNWATCHED_TREE_REASON.format(folders=MAX_WATCHES)
    return UNWATCHED_REASON


def note_unwatched_reads(gate: Gate, inspector: Inspector) -> bool:
    """Record the note when ``inspector`` (made to watch the workspace live) has credential
    files the kernel does not watch (:func:`unwatched_reason`); whether it did."""
    reason = unwatched_reason(inspector)
    if reason is None:
        return False
    judged = {"verdict": "WARN", "reason": reason, "caughtBy": "effect"}
    decision = gate.unjudged(READS_UNWATCHED, "inspection", {}, target=None, kind="note")
    gate.run(
        READS_UNWATCHED,
        {},
        lambda _decision: Outcome.success(extra={"judged": judged}),
        decision=decision,
    )
    return True
