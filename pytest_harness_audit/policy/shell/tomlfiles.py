"""TOML settings files of the workspace, parsed for the readings that need them
(:mod:`.pytest_plugins`, :mod:`.project_tables`)."""

from __future__ import annotations

import sys
from typing import Any, Final

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - pytest itself needs tomli before 3.11
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]


#: Documents parsed, by text (the same settings file is read by command after command);
#: callers never change a document.
_PARSED: Final[dict[str, dict[str, Any] | None]] = {}
_MAX_PARSED: Final = 64


def parse_toml(text: str) -> dict[str, Any] | None:
    """The document of a TOML text, ``None`` when it is not well-formed."""
    if text in _PARSED:
        return _PARSED[text]
    try:
        document: dict[str, Any] | None = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        document = None
    if len(_PARSED) >= _MAX_PARSED:
        _PARSED.clear()
    _PARSED[text] = document
    return document


def table(document: object, *keys: str) -> dict[str, Any]:
    """The table at ``keys`` of a document (empty when missing or not a table)."""
    current = document
    for key in keys:
        current = current.get(key) if isinstance(current, dict) else None
    return current if isinstance(current, dict) else {}


__all__ = ["parse_toml", "table"]
