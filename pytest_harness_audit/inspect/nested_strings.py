"""Every string of a JSON-like value (mappings, lists, tuples, nested), changed by one function.

Used wherever a value is rewritten string by string before it is kept: an audit record's
fields scrubbed of known secrets, a cassette's exchanges with secrets redacted and the
workspace path written as a token. Mapping keys are strings of the value too (a secret can be a
key), and a container nested deeper than :data:`MAX_DEPTH` levels is replaced by
:data:`WITHHELD` rather than left unchanged or walked into a ``RecursionError``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: Containers nested deeper than this are withheld rather than left unchanged.
MAX_DEPTH = 200
#: What stands for a container nested deeper than :data:`MAX_DEPTH` (passed through ``change``).
WITHHELD = f"[withheld: nested deeper than {MAX_DEPTH} levels]"


def map_strings(
    value: Any, change: Callable[[str], str], depth: int = 0, *, numbers: bool = False
) -> Any:
    """``value`` with ``change`` applied to every string in it, mapping keys included.

    Mappings come back as dicts, lists as lists and tuples as tuples; other values as they are.
    A container nested deeper than :data:`MAX_DEPTH` levels becomes ``change(WITHHELD)``. With
    ``numbers``, an ``int`` or ``float`` is passed to ``change`` as its text too, and becomes the
    changed text when ``change`` changes it (a numeric secret sent as a number).
    """
    if isinstance(value, str):
        return change(value)
    if numbers and isinstance(value, (int, float)) and not isinstance(value, bool):
        text = str(value)
        changed = change(text)
        return value if changed == text else changed
    if depth >= MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        return change(WITHHELD)
    if isinstance(value, Mapping):
        return {
            map_strings(key, change, depth, numbers=numbers)
            if isinstance(key, str) or numbers
            else key: map_strings(item, change, depth + 1, numbers=numbers)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        items = [map_strings(item, change, depth + 1, numbers=numbers) for item in value]
        return tuple(items) if isinstance(value, tuple) else items
    return value
