"""Locate the data folders (`rules/`, `fixtures/`) shipped with the package.

In a wheel they live under ``pytest_harness_audit/_data``; in a source checkout (editable install)
they are the top-level folders of the repository.
"""

from __future__ import annotations

from pathlib import Path

_DATA_DIR = Path(__file__).resolve().parent
_PACKAGE_DIR = _DATA_DIR.parent


def data_dir(name: str) -> Path:
    """Return the directory of the shipped data folder ``name`` (``rules`` or ``fixtures``)."""
    for candidate in (_DATA_DIR / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"data folder {name!r} not found next to {_PACKAGE_DIR}")
