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
# Credential files with a fixed dotted name (`.env`, `.ssh/id_rsa` …): their name in another case
# is no ordinary file but the same file on a case-insensitive file system (macOS, Windows).
# Substring names (`*secret*`, `token*.json`, `credentials.*`) are left alone: `SecretStore.java`
# or `Credentials.kt` are ordinary source files.
_FOLDABLE = re.compile(
    _SEGMENT + r"(?:"
    r"\.env(?:\.[^/\\]*)?"
    r"|\.aws[/\\](?:credentials|config)"
    r"|\.ssh[/\\](?:id_[^/\\]*|config)"
    r"|\.netrc|\.pgpass|\.npmrc|\.pypirc|\.my\.cnf"
    r"|\.docker[/\\]config\.json|\.kube[/\\]config"
    r"|\.gnupg[/\\][^/\\]*"
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


def folded_credential_path(path: str) -> str | None:
    """``path`` with a fixed-name credential file at its end in lower case (``.ENV`` → ``.env``).

    ``None`` when ``path`` names no such file or is already in lower case. Only the credential
    part is folded, so the rest of the path keeps its case.
    """
    # every such file is a dotfile or sits in a dot-directory: most paths stop at this test
    if ("/." not in path and path[:1] != "." and "\\." not in path) or path.islower():
        return None
    offset = max(0, len(path) - _MAX_CHECKED)
    match = _FOLDABLE.search(path, offset)
    if match is None:
        return None
    start = match.start()
    folded = path[:start] + path[start:].lower()
    return None if folded == path else folded
