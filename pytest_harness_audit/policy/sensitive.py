"""Recognise credential-looking files and agent-memory files by path.

A file tool on a credential-looking path also counts as category ``credential_access`` for rule
matching, and both kinds produce alerts on the audit record (whether or not a rule denies them).
Matching is case-insensitive on the end of the path; the patterns are linear (no nested
quantifiers), so a hostile path cannot slow them down.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_SEGMENT = r"(?:^|[/\\])"
_CREDENTIAL = re.compile(
    _SEGMENT + r"(?:"
    r"\.env(?:\.[^/\\]*)?"
    r"|credentials(?:\.[^/\\]*)?"
    r"|secrets?(?:\.[^/\\]*)?"
    r"|[^/\\]*secret[^/\\]*"
    r"|token[^/\\]*\.json|auth[^/\\]*\.json|[^/\\]*apikey[^/\\]*"
    r"|\.aws[/\\](?:credentials|config)"
    r"|\.ssh[/\\](?:id_[^/\\]*|config|known_hosts)"
    r"|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.my\.cnf"
    r"|\.docker[/\\]config\.json|\.kube[/\\]config"
    r"|\.gnupg[/\\][^/\\]*|\.gpg[/\\][^/\\]*"
    r")$",
    re.IGNORECASE,
)
_MEMORY = re.compile(
    r"(?:" + _SEGMENT + r"memory\.md"
    r"|" + _SEGMENT + r"memory[/\\](?:[^/\\]+[/\\])*[^/\\]+\.md"
    r"|"
    + _SEGMENT
    + r"\.(?:moltbot|clawdbot|openclaw|web4|claude)[/\\](?:[^/\\]+[/\\])*memory[^/\\]*"
    r")$",
    re.IGNORECASE,
)
_MAX_CHECKED = 4096  # longer strings are not file paths; checking their tail suffices


def is_credential_path(path: str) -> bool:
    """Whether ``path`` looks like a credential or secret file."""
    return _CREDENTIAL.search(path[-_MAX_CHECKED:]) is not None


def is_memory_path(path: str) -> bool:
    """Whether ``path`` looks like an agent-memory file (``MEMORY.md``, ``memory/**/*.md`` …)."""
    return _MEMORY.search(path[-_MAX_CHECKED:]) is not None


def any_credential(targets: Iterable[str]) -> bool:
    """Whether any of ``targets`` looks like a credential file."""
    return any(_CREDENTIAL.search(t[-_MAX_CHECKED:]) is not None for t in targets)
