"""Calls a ``pre`` let through that ran, and whose ``post`` never recorded them.

Each call's ``pre`` leaves a pending file that its ``post`` takes. At ``SessionStart`` and
``SessionEnd`` no call is in flight, so a pending file still there is a call whose post never
came. Most such calls never ran: the host's own ``deny`` rules or another hook refused them
after ``pre`` answered (no event follows a refusal), or the host stopped. But a post step can
also end before it takes the file (a process the call left running kills it, the machine goes
down), and the call it should have recorded — effects, output and all — would then leave no
trace but a count. The host's transcript (``transcript_path``, Claude Code's JSON lines) tells
the two apart: a call that ran has a ``tool_result`` block for its ``tool_use_id`` that is not an
error, where a refusal is an error result. Each such call is recorded as a fault note (the
session WARNs, ``unrecorded-outcome``) before the pending files are cleaned. A call whose
``pre`` was killed too left no pending file: each call record a post writes holds the host's
``tool_use_id`` (:data:`USE_ID_FIELD`), so a call the transcript shows ran, after the first call
a post recorded (before it the hooks may not have been installed), that no record holds is noted
the same way. Each noted call is still judged by what the transcript shows of it: its input by
the policy (a call the policy denies that ran unjudged got past the hooks: tamper, FAIL) and
its result for the project's known secrets. A call that failed and whose
``PostToolUseFailure`` never came reads as a refusal here, and a transcript that cannot be read
tells nothing: neither is noted.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.policy.categories import BUILTIN_TOOL_CATEGORIES, STATE

#: The host's own bookkeeping tools (its ``state`` tools): they act on nothing and return no
#: data, and some host versions fire no ``PostToolUse`` (or no hook at all) for them, so their
#: calls are not noted.
BOOKKEEPING_TOOLS = frozenset(
    tool for tool, category in BUILTIN_TOOL_CATEGORIES.items() if category == STATE
)
#: The field of a call record holding the host's ``tool_use_id`` of the call (set by post).
USE_ID_FIELD = "toolUseId"
#: The most of a transcript read (a longer one is read up to here: later calls go unnoted).
MAX_TRANSCRIPT_BYTES = 256 * 1024 * 1024
_CLAIMED = ".claimed.json"


def stale_use_ids(storage: Path, session_id: str) -> list[str]:
    """The ``tool_use_id`` of every call of the session whose pending file is still there, as
    pre left it or as a post step that ended before recording took it (a pending file is named
    by its call's ``tool_use_id``)."""
    folder = storage / "pending" / sanitize_session_id(session_id)
    try:
        names = sorted(entry.name for entry in os.scandir(folder))
    except OSError:
        return []
    found = [
        name.removesuffix(_CLAIMED) if name.endswith(_CLAIMED) else name.removesuffix(".json")
        for name in names
        if name.endswith(".json") and not name.startswith(".")
    ]
    return sorted(set(found))


def transcript_lines(
    path: str, offset: int = 0, limit: int = MAX_TRANSCRIPT_BYTES
) -> Iterable[bytes]:
    """The transcript's lines from byte ``offset`` on, read without blocking (a FIFO or a
    device in its place reads as nothing), at most ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        with os.fdopen(fd, "rb", closefd=False) as handle:
            handle.seek(max(0, offset))
            return handle.read(limit).splitlines()
    except OSError:
        return []
    finally:
        os.close(fd)


def message_blocks(line: bytes, kind: str | None = None) -> list[dict[str, Any]]:
    """The content blocks of one transcript line (none when it is not a message, or not one
    of type ``kind`` when given: ``assistant`` holds the calls, ``user`` their results)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return []
    if kind is not None and (not isinstance(data, dict) or data.get("type") != kind):
        return []
    message = data.get("message") if isinstance(data, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [block for block in content if isinstance(block, dict)]


class TranscriptCall(NamedTuple):
    """A call the host's transcript shows ran: its ``tool_use_id``, tool, input (the
    ``tool_use`` block's, ``{}`` when it has none) and result (its text, as the agent got it);
    ``error``: the result is an error (``is_error``: a refusal, or a call that failed)."""

    use_id: str
    tool: str
    input: dict[str, Any]
    result: str
    error: bool = False


def transcript_calls(transcript: str | None) -> list[TranscriptCall]:
    """Each call the transcript shows ran, in its order: a ``tool_result`` for it that is not
    an error (the tool and input from its ``tool_use`` block), but for
    :data:`BOOKKEEPING_TOOLS`."""
    if transcript is None:
        return []
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    ran: dict[str, str] = {}
    for line in transcript_lines(transcript):
        if b'"tool_' not in line:
            continue
        for block in message_blocks(line):
            use_id = block.get("id") if block.get("type") == "tool_use" else None
            if isinstance(use_id, str):
                name, given = block.get("name"), block.get("input")
                uses[use_id] = (
                    name if isinstance(name, str) else "unknown",
                    given if isinstance(given, dict) else {},
                )
            result_id = block.get("tool_use_id") if block.get("type") == "tool_result" else None
            # an error result is a refusal (the host's rules, another hook) or a failure
            if isinstance(result_id, str) and block.get("is_error") is not True:
                ran[result_id] = _result_text(block.get("content"))
    found = [
        TranscriptCall(use_id, *uses.get(use_id, ("unknown", {})), result)
        for use_id, result in ran.items()
    ]
    return [call for call in found if call.tool not in BOOKKEEPING_TOOLS]


def _result_text(content: object) -> str:
    """A ``tool_result``'s content as text: a string, or its text blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict)]
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""


def use_id_fields(use_id: str | None) -> dict[str, Any] | None:
    """The fields a record of a call adds for the host's ``tool_use_id`` (``None``: none
    given): a refusal's record holds it too, so a chain that lost it is found (below)."""
    return {USE_ID_FIELD: use_id} if use_id else None


#: The fields a refusal adds at an event whose payload names no ``tool_use_id``
#: (``PermissionRequest``): the field, empty, so that it is not taken for the refusal of an
#: older door that kept no id with its refusals (:func:`.hook_unseen.claimable`).
NO_USE_ID: dict[str, Any] = {USE_ID_FIELD: None}


#: A tool result's text when the user interrupted the call (the hook step may not have come).
_INTERRUPTED = "interrupted by user"


def transcript_uses(transcript: str | None, session_id: str | None = None) -> list[TranscriptCall]:
    """Every call the transcript shows the agent made, in its order, whatever came of it (run,
    refused, no result yet), but for :data:`BOOKKEEPING_TOOLS`, calls the user interrupted and
    (``session_id`` given) lines of another session (a transcript a resumed session copied);
    ``result`` is the text of its result when there is one."""
    if transcript is None:
        return []
    uses: dict[str, tuple[str, dict[str, Any]]] = {}
    results: dict[str, str] = {}
    errors: set[str] = set()
    for line in transcript_lines(transcript):
        if b'"tool_' not in line or (session_id and _other_session(line, session_id)):
            continue
        for block in message_blocks(line):
            use_id = block.get("id") if block.get("type") == "tool_use" else None
            if isinstance(use_id, str) and use_id not in uses:
                name, given = block.get("name"), block.get("input")
                uses[use_id] = (
                    name if isinstance(name, str) else "unknown",
                    given if isinstance(given, dict) else {},
                )
            result_id = block.get("tool_use_id") if block.get("type") == "tool_result" else None
            if isinstance(result_id, str):
                results[result_id] = _result_text(block.get("content"))
                if block.get("is_error") is True:
                    errors.add(result_id)
                else:
                    errors.discard(result_id)
    return [
        TranscriptCall(use_id, tool, given, results.get(use_id, ""), use_id in errors)
        for use_id, (tool, given) in uses.items()
        if tool not in BOOKKEEPING_TOOLS and _INTERRUPTED not in results.get(use_id, "")
    ]


def _other_session(line: bytes, session_id: str) -> bool:
    """Whether a transcript line names a session other than ``session_id``."""
    if b'"sessionId"' not in line:
        return False
    try:
        named = json.loads(line).get("sessionId")
    except (ValueError, RecursionError, AttributeError):
        return False
    return isinstance(named, str) and named != session_id


def made_unseen(uses: list[TranscriptCall], held: set[str]) -> list[TranscriptCall]:
    """Of the calls the transcript shows the agent made, those after the first one a record
    holds (``held``: the ``tool_use_id`` of every record, refusals included, and of pending
    files; before it the hooks may not have been installed) that no record holds. Each came
    through a ``pre`` step (the host runs its hooks before its own rules): one the policy
    refuses was recorded as refused, so a record missing is a record lost."""
    first = next((i for i, use in enumerate(uses) if use.use_id in held), None)
    if first is None:
        return []
    return [use for use in uses[first:] if use.use_id not in held]


#: What a refusal by this door's ``pre`` starts with (``[blocked] [web4-policy] …``), as the
#: host shows it to the model in the call's error result.
REFUSAL_MARK = "[blocked] [web4-"


def refused_here(
    uses: list[TranscriptCall], held: set[str], *, anywhere: bool
) -> list[TranscriptCall]:
    """Of the calls the transcript shows the agent made, those whose error result is this
    door's refusal (a result that is no error is output the call printed, the mark perhaps in
    it) and that no record holds: after the first one a record holds, or
    (``anywhere``: the chain began in the session's middle, not at a ``SessionStart``)
    wherever they stand: the hooks ran for them, so a chain begun anew after them (the store
    and its witness erased) once held them. A chain begun at a ``SessionStart`` may be a
    session resumed after ``audit prune``: its earlier refusals are not claimed."""
    if not anywhere:
        uses = made_unseen(uses, held)
    return [
        use for use in uses if use.use_id not in held and use.error and REFUSAL_MARK in use.result
    ]


def ran_unseen(calls: list[TranscriptCall], seen: set[str]) -> list[TranscriptCall]:
    """Of the transcript's ``calls`` that ran, those after the first one a hook step saw
    (``seen``: the ``tool_use_id`` the chain's records hold and those of pending files; before
    it the hooks may not have been installed) that none saw."""
    first = next((i for i, call in enumerate(calls) if call.use_id in seen), None)
    if first is None:
        return []
    return [call for call in calls[first:] if call.use_id not in seen]


def problem_of(use_id: str, tool: str, event: str, *, pending: bool = True) -> str:
    """The fault note's text for a call that ran with no post recorded (``pending``: its pre
    left a pending file; else no hook step of it left anything)."""
    steps = "no post step recorded it" if pending else "no hook step saw it"
    return (
        f"the call {tool} ({use_id}) ran, the host's transcript shows its result, and {steps} "
        f"(found at {event}): the call ran unjudged"
    )


__all__ = [
    "MAX_TRANSCRIPT_BYTES",
    "NO_USE_ID",
    "REFUSAL_MARK",
    "USE_ID_FIELD",
    "TranscriptCall",
    "made_unseen",
    "message_blocks",
    "problem_of",
    "ran_unseen",
    "refused_here",
    "stale_use_ids",
    "transcript_calls",
    "transcript_lines",
    "transcript_uses",
    "use_id_fields",
]
