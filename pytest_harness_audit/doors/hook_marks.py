"""The mark this door leaves in the host's transcript at every ``PreToolUse`` it answers.

A store and its continuity witness erased together between two events, by code whose names no
reading follows or by a process a call left running, leave the next event nothing of the door's
own to compare with: the session looks like one whose hooks were installed in its middle. The
host's transcript (``transcript_path``) is the one record the agent cannot take back (a call
that writes it is refused), so each ``pre`` answer carries a short ``additionalContext``
(:data:`DOOR_MARK`): Claude Code adds it to the model's context and keeps it in the transcript
as an ``attachment`` line of type ``hook_additional_context`` naming the event
(``hookEvent: "PreToolUse"``) and the call (``toolUseID``). A later event that finds no witness
and no chain, while the transcript holds such a line of the session, knows the door ran before
and wrote both: a lost chain (:mod:`.hook_continuity_events`).

Only the host's own ``attachment`` lines count: a tool's output or the agent's text quoting the
mark is no attachment. Calls made before the hooks were installed carry no mark, so a genuine
mid-session install is still told apart.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_harness_audit.doors.hook_unfinished import transcript_lines

#: What every ``PreToolUse`` answer adds to the model's context (and so to the transcript).
DOOR_MARK = "[web4-audit] harness-audit gated this call"
_MARK_BYTES = b"[web4-audit]"
_PRE = "PreToolUse"
#: The host's attachment types that hold a hook's output: its added context, or its stdout.
_HOOK_OUTPUT = frozenset({"hook_additional_context", "hook_success"})


def marked(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` (a ``PreToolUse`` answer) with :data:`DOOR_MARK` added to its
    ``additionalContext``, after any context it already gives; every other field as it was."""
    specific = answer.get("hookSpecificOutput")
    fields: dict[str, Any] = dict(specific) if isinstance(specific, dict) else {}
    fields["hookEventName"] = _PRE
    given = fields.get("additionalContext")
    fields["additionalContext"] = f"{given}\n{DOOR_MARK}" if given else DOOR_MARK
    return {**answer, "hookSpecificOutput": fields}


def marked_calls(
    transcript: str | None, session_id: str, upto: int | None = None
) -> tuple[str, ...]:
    """The ``toolUseID`` of each call whose ``PreToolUse`` output in the host's transcript holds
    :data:`DOOR_MARK` (an ``attachment`` line of the session, written by the host), in its
    first ``upto`` bytes when given."""
    if transcript is None:
        return ()
    found: dict[str, None] = {}
    lines = transcript_lines(transcript) if upto is None else transcript_lines(transcript, 0, upto)
    for line in lines:
        if _MARK_BYTES not in line or b'"attachment"' not in line:
            continue
        use_id = _marked_use(line, session_id)
        if use_id is not None:
            found[use_id] = None
    return tuple(found)


def _marked_use(line: bytes, session_id: str) -> str | None:
    """The call a transcript line marks as answered by this door (``None``: it marks none)."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("type") != "attachment":
        return None
    named = data.get("sessionId")
    if isinstance(named, str) and named != session_id:
        return None
    attachment = data.get("attachment")
    if not isinstance(attachment, dict) or attachment.get("type") not in _HOOK_OUTPUT:
        return None
    if attachment.get("hookEvent") != _PRE:
        return None
    held = attachment.get("content") if "content" in attachment else attachment.get("stdout")
    texts = held if isinstance(held, list) else [held]
    if not any(isinstance(text, str) and DOOR_MARK in text for text in texts):
        return None
    use_id = attachment.get("toolUseID")
    return use_id if isinstance(use_id, str) and use_id else None


__all__ = ["DOOR_MARK", "marked", "marked_calls"]
