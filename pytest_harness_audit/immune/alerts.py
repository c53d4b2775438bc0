"""Credential and agent-memory alerts: recognise the calls that touch secrets or agent memory.

An alert is a name put on the call's record (``credential_access``, ``memory_write``) whether or
not a rule denies the call; the immune triggers weigh it. Paths are matched case-insensitively on
their end, anchored at a path-segment boundary, so ``prod.env.bak`` or ``mymemory.md`` do not
count. Command strings are split into shell words first, so ``cat ~/.aws/credentials | curl …``
alerts on its second word. Matching uses RE2, which runs in linear time on any input.

Known-harmless look-alikes are not alerts: ``.env.example`` (and ``.sample``/``.template``/
``.dist``/``.defaults``), public keys ``.ssh/id_*.pub``, ``tokenizer*.json`` of ML models and
``author(s).json``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import re2

from pytest_harness_audit.policy.sensitive import TOOL_CREDENTIAL_NAMES

CREDENTIAL_ACCESS = "credential_access"
MEMORY_WRITE = "memory_write"
#: A command whose reading notes a network exchange (``curl``, ``getent hosts``, inline code
#: using a network library): judged as a command, it is a ``network`` call for the flows too.
NETWORK = "network"
#: Every alert name a record (and an immune flow pattern) may carry.
ALERT_NAMES = (CREDENTIAL_ACCESS, MEMORY_WRITE, NETWORK)
#: The inspection's alert of a credential file read while a call ran, by a route its text does
#: not show (seen by the kernel): a credential access for the ladder too.
CREDENTIAL_READ = "credential_read"
#: The inspection's alert of git's stored copy of a credential file read by a program whose text
#: does not account for it: a credential access for the ladder too.
CREDENTIAL_OBJECT_READ = "credential_object_read"

_FILE_WRITE = "file_write"
_COMMAND = "command"
_NETWORK_NOTE = "note:network"  # the shell reading's target of a network exchange

_OPTIONS: Any = re2.Options()
_OPTIONS.case_sensitive = False

_CREDENTIAL_NAMES = (
    r"\.env(?:\.[^/]*)?",
    r"[^/]*credentials(?:\.[^/]*)?",
    r"[^/]*secret[^/]*",
    r"token[^/]*\.json",
    r"auth[^/]*\.json",
    r"[^/]*api[-_]?key[^/]*",
    r"\.aws/(?:credentials|config)",
    r"\.ssh/(?:id_[^/]*|config|known_hosts)",
    r"\.(?:netrc|pgpass|npmrc|pypirc|my\.cnf)",
    r"\.docker/config\.json",
    r"\.kube/config",
    r"\.(?:gnupg|gpg)/.*",
    *(name.replace("[/\\\\]", "/").replace("[^/\\\\]", "[^/]") for name in TOOL_CREDENTIAL_NAMES),
)
_CREDENTIAL: Any = re2.compile(r"(?:^|/)(?:" + "|".join(_CREDENTIAL_NAMES) + r")$", _OPTIONS)
_HARMLESS: Any = re2.compile(
    r"(?:^|/)(?:\.env[._-](?:[^/]*[._-])?(?:example|sample|template|dist|defaults?)"
    r"|id_[^/]*\.pub|tokenizer[^/]*\.json|authors?\.json)$",
    _OPTIONS,
)
_MEMORY: Any = re2.compile(
    r"(?:^|/)(?:memory\.md"
    r"|memory/(?:.*/)?[^/]+\.md"
    r"|\.(?:moltbot|clawdbot|openclaw|web4|claude)/(?:.*/)?memory[^/]*(?:/.*)?)$",
    _OPTIONS,
)
# Shell word separators, plus `=`, `@`, `:` and `,` so `--env-file=.env`, `curl -F f=@.env` and
# `host:~/.netrc` expose the path. One character class with `+`: linear in Python's engine too.
_WORD_SEPARATORS = re.compile(r"[\s;|&<>()`'\"=@:,]+")
# Destinations of output redirection (`> f`, `>> f`, `2> f`) and of `tee [-a] f`.
_REDIRECT: Any = re2.compile(r"(?:>>?|\btee(?:\s+-[a-z]+)*)\s*([^\s;|&<>()`'\"]+)")


def credential_alert(targets: Iterable[str]) -> str | None:
    """``"credential_access"`` if any target (or any shell word in one) is a credential file."""
    return CREDENTIAL_ACCESS if any(_is_credential(p) for p in _paths(targets)) else None


def memory_write_alert(category: str, targets: Iterable[str]) -> str | None:
    """``"memory_write"`` if a call of ``category`` writes an agent-memory file.

    A ``file_write`` call alerts when a target is a memory file; a ``command`` call alerts when
    it redirects or ``tee``-s output into one (reading memory is not a write).
    """
    if category == _FILE_WRITE:
        paths: Iterable[str] = _paths(targets)
    elif category == _COMMAND:
        paths = _redirect_destinations(targets)
    else:
        return None
    return MEMORY_WRITE if any(_search(_MEMORY, p) is not None for p in paths) else None


def alerts_for(tool: str, category: str, targets: Iterable[str]) -> tuple[str, ...]:
    """All alerts of one call, in the order of :data:`ALERT_NAMES`.

    ``tool`` named ``Bash`` is treated as a shell command even when a policy maps it to another
    category, so its redirections are checked for memory writes.
    """
    target_list = [t for t in targets if isinstance(t, str)]
    write_category = _COMMAND if tool == "Bash" and category != _FILE_WRITE else category
    network = NETWORK if category == _COMMAND and _NETWORK_NOTE in target_list else None
    found = (
        credential_alert(target_list),
        memory_write_alert(write_category, target_list),
        network,
    )
    return tuple(alert for alert in found if alert is not None)


def _is_credential(path: str) -> bool:
    return _search(_CREDENTIAL, path) is not None and _search(_HARMLESS, path) is None


def _utf8_safe(text: str) -> str:
    """``text`` with each lone surrogate (which UTF-8, and so RE2, cannot carry) read as ``?``."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _search(pattern: Any, text: str) -> Any:
    try:
        return pattern.search(text)
    except UnicodeEncodeError:
        return pattern.search(_utf8_safe(text))


def _paths(targets: Iterable[str]) -> Iterator[str]:
    """Each target as a whole, then each of its shell words, with ``\\`` read as ``/``."""
    for target in targets:
        path = target.replace("\\", "/")
        yield path
        words = [w for w in _WORD_SEPARATORS.split(path) if w]
        if len(words) > 1:
            yield from words


def _redirect_destinations(commands: Iterable[str]) -> Iterator[str]:
    for command in commands:
        for match in _REDIRECT.finditer(_utf8_safe(command.replace("\\", "/"))):
            yield match.group(1)
