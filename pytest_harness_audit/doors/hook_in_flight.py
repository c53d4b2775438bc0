"""Whether another call of a hook session is in flight: its pre wrote its pending file and its
post has not taken it yet (what the between-event comparisons wait for, :mod:`.hook_between`);
and whether a call runs on after its post (:func:`runs_on`)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.doors.hook_pending_seal import pending_key

#: How long a call's pending file counts as a call in flight (the host's longest foreground
#: command runs ten minutes).
IN_FLIGHT_SECONDS = 900


def in_flight(storage: str | os.PathLike[str], session_id: str, own: Path | None) -> bool:
    """Whether a call of the session other than ``own`` (its pending file) is in flight: its
    pre wrote its pending file less than :data:`IN_FLIGHT_SECONDS` ago (a call whose post never
    came does not stop the comparison for good)."""
    folder = Path(storage) / "pending" / sanitize_session_id(session_id)
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return False
    # the call's own pending file, and the same claimed by its post (``<key>.claimed.json``)
    mine = None if own is None else pending_key(own) + "."
    since = time.time() - IN_FLIGHT_SECONDS
    for entry in entries:
        if not entry.name.endswith(".json") or (mine is not None and entry.name.startswith(mine)):
            continue
        try:
            if entry.stat().st_mtime >= since:
                return True
        except OSError:
            continue
    return False


def runs_on(tool: str, tool_input: Any, response: Any) -> str | None:
    """Why a call's effects are not over at its post (``None``: they are): a command the host
    runs in the background (``run_in_background``, or a ``backgroundTaskId`` in its response)
    gets its post at once, and what it does comes after the last window that could see it."""
    asked = isinstance(tool_input, Mapping) and tool_input.get("run_in_background") is True
    started = isinstance(response, Mapping) and bool(response.get("backgroundTaskId"))
    if not asked and not started:
        return None
    return f"the {tool} command runs on in the background: its effects come after this event"


__all__ = ["IN_FLIGHT_SECONDS", "in_flight", "runs_on"]
