"""The files a patch given to a tool writes.

A patch tool (OpenAI's ``apply_patch``, an MCP server's ``patch_file``) names the files it
changes inside its text, not as path parameters: ``*** Update File: SOUL.md`` in the
``apply_patch`` envelope, ``--- a/.env`` / ``+++ b/.env`` or ``diff --git a/x b/x`` in a unified
diff. Those are writes of the files named, judged as any other (:func:`.views.with_write_views`).

A text is read as a patch when it opens with the ``*** Begin Patch`` envelope (a format of
its own, whoever sends it), or when the tool's name says it applies patches (``patch`` in it):
then its envelope lines and unified-diff headers are read wherever they stand. A diff quoted in
an issue's body or a commit message (no patch tool, no envelope) names no write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from pytest_harness_audit.policy.param_targets import is_mapping

#: The ``apply_patch`` envelope's first line.
ENVELOPE: Final = "*** Begin Patch"
_ENVELOPE_FILE: Final = re.compile(
    r"^\*\*\* (?:Add File|Update File|Delete File|Move to): *(.+?)\s*$", re.MULTILINE
)
_DIFF_FILE: Final = re.compile(
    r"^(?:diff --git a/(\S+) b/(\S+)|(?:---|\+\+\+) (?:[ab]/)?([^\t\n]+?)(?:\t[^\n]*)?"
    r"|(?:rename|copy) (?:from|to) (.+?))\s*$",
    re.MULTILINE,
)
_NO_FILE: Final = "/dev/null"
#: Most characters of a text read for file names, and most names taken from one call.
MAX_PATCH_TEXT: Final = 1 << 22
MAX_PATCH_PATHS: Final = 4096
_MAX_DEPTH: Final = 4


def is_patch_tool(tool: str) -> bool:
    """Whether ``tool``'s name says it applies patches (``apply_patch``, ``mcp__fs__patch``)."""
    return "patch" in tool.lower()


def patch_paths(tool: str, params: Mapping[str, Any]) -> list[str]:
    """The files the patches among ``params``' text values write, each once, in order (at most
    :data:`MAX_PATCH_PATHS`); empty when no value is a patch (module doc)."""
    diffs = is_patch_tool(tool)
    found: dict[str, None] = {}
    queue: list[tuple[Any, int]] = [(value, 0) for value in params.values()]
    position = 0  # (a queue read in order: the texts' files in the order the call gives them)
    while position < len(queue) and len(found) < MAX_PATCH_PATHS:
        value, depth = queue[position]
        position += 1
        if type(value) is str:
            _add_paths(found, value, diffs)
        elif depth < _MAX_DEPTH and is_mapping(value):
            queue.extend([(item, depth + 1) for item in value.values()])
        elif depth < _MAX_DEPTH and isinstance(value, (list, tuple)):
            queue.extend([(item, depth + 1) for item in value])
    return list(found)[:MAX_PATCH_PATHS]


def _add_paths(found: dict[str, None], text: str, diffs: bool) -> None:
    """Add the files ``text`` names as a patch to ``found``."""
    text = text[:MAX_PATCH_TEXT]
    # a patch tool's text is read for the envelope's lines wherever they are (a lenient tool
    # may skip what comes before them)
    if text.lstrip().startswith(ENVELOPE) or (diffs and "*** " in text):
        for match in _ENVELOPE_FILE.finditer(text):
            found[match.group(1)] = None
    if not diffs:
        return
    for match in _DIFF_FILE.finditer(text):
        for name in match.groups():
            if name and name != _NO_FILE:
                found[name] = None
