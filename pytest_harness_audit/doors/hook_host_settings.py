"""The host's own settings, outside the workspace, watched across a call of the hook door.

``~/.claude/settings.json`` (``disableAllHooks``, ``hooks``) and ``~/.claude.json``
(``mcpServers``) decide whether the hooks run at all and which tools exist. The gate refuses a
write to them it can read, but a program can build their names at run time
(``os.path.expanduser('~') + '/.cla' + 'ude/settings.json'``). So ``hook pre`` keeps a digest of
the parts of each that switch hooks or tools on and off, and ``hook post`` compares: a change is
the effect ``protected_file_changed`` (``effects.hostSettings``), judged as a persona rewrite is
(``safety``: FAIL). Only those parts count: the host rewrites the rest of ``~/.claude.json``
(counters, tips, history) on its own during a session.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any

#: The host's settings files (under the home folder) and the keys of each that count.
HOST_SETTINGS: Mapping[str, tuple[str, ...]] = {
    ".claude/settings.json": (
        "hooks", "disableAllHooks", "permissions", "env", "apiKeyHelper", "mcpServers",
        "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
        "statusLine", "enabledPlugins", "extraKnownMarketplaces",
    ),
    ".claude/settings.local.json": (
        "hooks", "disableAllHooks", "permissions", "env", "apiKeyHelper", "mcpServers",
        "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers",
        "statusLine", "enabledPlugins", "extraKnownMarketplaces",
    ),
    ".claude.json": ("mcpServers", "projects"),
}  # fmt: skip
#: The per-project keys of ``~/.claude.json`` that count.
_PROJECT_KEYS = ("mcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers", "allowedTools")
_MAX_BYTES = 16 << 20


def host_settings_state(home: str | None = None) -> dict[str, str | None]:
    """``name → digest`` of what counts in each host settings file (``None``: absent)."""
    base = home if home is not None else os.path.expanduser("~")
    return {name: _digest(os.path.join(base, name), keys) for name, keys in HOST_SETTINGS.items()}


def changed_host_settings(before: Any, home: str | None = None) -> list[str]:
    """The host settings files (as ``~/…``) whose counted parts changed since ``before`` (a
    :func:`host_settings_state`; anything else compares as nothing known: no change)."""
    if not isinstance(before, Mapping):
        return []
    now = host_settings_state(home)
    return sorted(f"~/{name}" for name in now if name in before and before[name] != now[name])


def _digest(path: str, keys: tuple[str, ...]) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(_MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        return "invalid: " + hashlib.sha256(data).hexdigest()  # the host may read it otherwise
    if not isinstance(document, dict):
        return "not an object: " + hashlib.sha256(data).hexdigest()
    counted = {key: document.get(key) for key in keys}
    projects = counted.get("projects")
    if isinstance(projects, dict):
        # the host adds an entry for every project it opens: only the tools one names count
        named = {
            name: {key: entry[key] for key in _PROJECT_KEYS if entry.get(key)}
            for name, entry in projects.items()
            if isinstance(entry, dict)
        }
        counted["projects"] = {name: keys for name, keys in named.items() if keys}
    text = json.dumps(counted, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
