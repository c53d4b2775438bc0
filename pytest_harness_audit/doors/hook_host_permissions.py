"""``projects[*].allowedTools`` of ``~/.claude.json``: the tools a host allows for good.

Hosts that predate ``settings.json`` permission rules write an entry there (``Bash(npm
test:*)``, ``mcp__db__query``, ``WebFetch(domain:example.com)``) when the user answers "always
allow" at their permission prompt. An entry skips the host's prompt for later calls, so one
the agent adds matters; one the host adds at the user's prompt must not fail the session. The
door keeps the entries as a set (:data:`ALLOWED_TOOLS` in the settings state, one short hash per
project and entry) and judges a change by what it adds:

* an entry removed only takes a permission away: it never counts;
* an entry added that names a call the host asked the user about and that is still open (``hook
  pre`` answered ``ask``, or ``PermissionRequest`` marked it; its post not yet recorded) is the
  host's own write at the prompt: recorded (``effects.hostAllowedTools``), not judged;
* at a call's post, an entry added that names that call although the door saw no prompt for it
  (a host without ``PermissionRequest`` whose own rules asked): the host's write cannot be told
  from the call's own, so it WARNs (alert :data:`HOST_PERMISSION_ADDED`);
* any other entry added (between calls, or naming another tool) FAILs as any change of the
  host's settings does.

An entry names a call when its tool is the call's, and: for ``Bash`` it has a command (a bare
``Bash``, or ``Bash(*)``, allows every command, which no prompt offers) that is the call's
command or, ending in ``*``, one of its prefixes; for ``WebFetch(domain:D)`` the call's URL is on
``D``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pytest_harness_audit.audit.storage import sanitize_session_id
from pytest_harness_audit.doors.hook_asks import ASKED_KEY
from pytest_harness_audit.doors.hook_host_digest import read_json
from pytest_harness_audit.doors.hook_pending_seal import read_seals

#: The name of the entries' set in a host settings state.
ALLOWED_TOOLS = ".claude.json:allowedTools"
#: The alert of an entry added in a call's window that the door cannot tell from the call's own.
HOST_PERMISSION_ADDED = "host_permission_added"
#: The tool of the ``note`` that keeps, in the chain, a change of the entries that does not count.
HOST_ALLOWED_TOOLS = "HostAllowedToolsChanged"
#: The effects key of the entries a change added (and how many it removed).
EFFECTS_KEY = "hostAllowedTools"
#: The effects key of a change of the project settings' ``permissions`` entries.
PERMISSIONS_EFFECTS_KEY = "hostPermissions"
_RULE = re.compile(r"([^()]+?)\s*(?:\((.*)\))?", re.DOTALL)


def entries(home: str) -> dict[str, tuple[str, str]]:
    """``hash → (project, entry)`` of every ``allowedTools`` entry in ``~/.claude.json``."""
    document = read_json(os.path.join(home, ".claude.json"))
    projects = document.get("projects") if isinstance(document, dict) else None
    found: dict[str, tuple[str, str]] = {}
    for project, entry in projects.items() if isinstance(projects, dict) else ():
        tools = entry.get("allowedTools") if isinstance(entry, dict) else None
        for rule in tools if isinstance(tools, list) else ():
            if isinstance(rule, str):
                key = hashlib.sha256(f"{project}\0{rule}".encode("utf-8", "surrogatepass"))
                found[key.hexdigest()[:16]] = (str(project), rule)
    return found


def allowed_state(home: str) -> str | None:
    """The entries' set as a state value (``None``: there are none)."""
    return entries_state(entries(home))


@dataclass(frozen=True)
class Change:
    """What a change of the entries added (by what names it) and how many it removed."""

    #: Added entries that name an open call the host asked about: the host's own writes.
    at_prompt: tuple[str, ...] = ()
    #: Added entries that name the call being closed, no prompt seen for it: WARN.
    unprompted: tuple[str, ...] = ()
    #: Added entries nothing explains: FAIL.
    unexplained: tuple[str, ...] = ()
    removed: int = 0

    @property
    def added(self) -> tuple[str, ...]:
        """Every added entry."""
        return (*self.at_prompt, *self.unprompted, *self.unexplained)

    def effects(self, key: str = EFFECTS_KEY) -> dict[str, Any]:
        """The record's ``effects`` part for this change (under ``key``)."""
        return {key: {"added": list(self.added), "removed": self.removed}}


def change_of(
    before: Any,
    home: str,
    *,
    asked: Iterable[tuple[str, Mapping[str, Any]]] = (),
    call: tuple[str, Mapping[str, Any]] | None = None,
) -> Change:
    """The change of the entries since ``before`` (a state value), judged against the asked
    calls still open (``asked``) and, at a post, the call being closed (``call``)."""
    return judge_added(before, entries(home), asked=asked, call=call)


def judge_added(
    before: Any,
    now: Mapping[str, tuple[str, str]],
    *,
    asked: Iterable[tuple[str, Mapping[str, Any]]] = (),
    call: tuple[str, Mapping[str, Any]] | None = None,
) -> Change:
    """The change from ``before`` (a state value: hashes) to ``now`` (``hash → (where,
    entry)``), each added entry judged by what names it (see :func:`change_of`)."""
    known = set(before.split()) if isinstance(before, str) else set()
    open_asks = list(asked)
    at_prompt: list[str] = []
    unprompted: list[str] = []
    unexplained: list[str] = []
    for key, (_project, rule) in sorted(now.items()):
        if key in known:
            continue
        if any(names_call(rule, tool, given) for tool, given in open_asks):
            at_prompt.append(rule)
        elif call is not None and names_call(rule, *call):
            unprompted.append(rule)
        else:
            unexplained.append(rule)
    removed = len(known - set(now))
    return Change(tuple(at_prompt), tuple(unprompted), tuple(unexplained), removed)


def permission_entries(paths: Iterable[str]) -> dict[str, tuple[str, str]]:
    """``hash → (file, entry)`` of the ``permissions`` of settings files (the project's: the
    host writes an ``allow`` rule there when the user allows a tool for good at its prompt):
    each ``allow`` rule, and the rest of ``permissions`` (``deny``, ``ask``, ``defaultMode``,
    ``additionalDirectories``…) as one entry no call names."""
    found: dict[str, tuple[str, str]] = {}
    for path in paths:
        document = read_json(path)
        given = document.get("permissions") if isinstance(document, dict) else None
        if not isinstance(given, dict):
            continue
        allow = given.get("allow")
        rules = [r for r in allow if isinstance(r, str)] if isinstance(allow, list) else []
        rest = {key: value for key, value in given.items() if key != "allow"}
        if rest:
            text = json.dumps(rest, sort_keys=True, default=str)
            digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
            rules.append(f"permissions besides allow ({', '.join(sorted(rest))}): {digest}")
        for rule in rules:
            key = hashlib.sha256(f"{path}\0{rule}".encode("utf-8", "surrogatepass"))
            found[key.hexdigest()[:16]] = (path, rule)
    return found


def entries_state(found: Mapping[str, tuple[str, str]]) -> str | None:
    """Entries (:func:`entries`, :func:`permission_entries`) as a state value (``None``: none)."""
    return " ".join(sorted(found)) or None


def names_call(rule: str, tool: str, tool_input: Mapping[str, Any]) -> bool:
    """Whether an ``allowedTools`` entry is one a prompt for this call offers (see the module
    doc)."""
    match = _RULE.fullmatch(rule.strip())
    if match is None or match.group(1) != tool:
        return False
    content = (match.group(2) or "").strip()
    if tool == "Bash":
        command = str(tool_input.get("command") or "").strip()
        if not content.rstrip("*").removesuffix(":").strip() or not command:
            return False  # ``Bash``, ``Bash(*)``: every command, which no prompt offers
        if content.endswith("*"):
            return command.startswith(content.rstrip("*").removesuffix(":").rstrip())
        return command == content
    if tool == "WebFetch" and content.startswith("domain:"):
        host = urlsplit(str(tool_input.get("url") or "")).hostname or ""
        return host.lower() == content.removeprefix("domain:").strip().lower()
    return True


def asked_calls(
    storage: str | os.PathLike[str], session_id: str
) -> list[tuple[str, Mapping[str, Any]]]:
    """``(tool, input)`` of the session's open calls the host asked the user about (their
    pending files, claimed ones included: a post in progress). Once the session's calls are
    sealed (:mod:`.hook_pending_seal`), only files their seals cover count: an ask a call wrote
    into the store explains nothing."""
    folder = Path(storage) / "pending" / sanitize_session_id(session_id)
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    seals = read_seals(Path(storage), session_id)
    found: list[tuple[str, Mapping[str, Any]]] = []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        try:
            data = (folder / name).read_bytes()
            state = json.loads(data)
        except (OSError, ValueError, RecursionError):
            continue
        sealed = seals.get(name.removesuffix(".json").removesuffix(".claimed"))
        if seals and (sealed is None or not sealed.holds(data)):
            continue
        entry = state.get(ASKED_KEY) if isinstance(state, dict) else None
        if isinstance(entry, dict) and isinstance(entry.get("tool"), str):
            given = entry.get("input")
            found.append((entry["tool"], given if isinstance(given, dict) else {}))
    return found


__all__ = [
    "ALLOWED_TOOLS",
    "EFFECTS_KEY",
    "HOST_ALLOWED_TOOLS",
    "HOST_PERMISSION_ADDED",
    "PERMISSIONS_EFFECTS_KEY",
    "Change",
    "allowed_state",
    "asked_calls",
    "change_of",
    "entries",
    "entries_state",
    "judge_added",
    "names_call",
    "permission_entries",
]
