"""Lazy tool results made concrete before inspection (the function-tool door).

A tool may return a generator, an iterator or a file-like object: what the model reads is what
the framework later pulls out of it, which inspection cannot see in ``<generator object …>``. So
the door reads such a result first, bounded, and hands the framework (and inspection) what it
read instead:

* an iterator or generator (sync or async): a list of at most :data:`MAXIMUM_ITEMS` items — the
  JSON form pydantic gives a generator; a longer one is closed there and the list ends with a
  :data:`TRUNCATED` note saying so;
* a file-like object (``io.IOBase``, or anything with ``read`` and ``readline``): its content, up
  to :data:`MAXIMUM_CHARACTERS` characters (bytes for a binary file), followed by the note when
  more was left unread.

* an iterator inside a list, a tuple, a dict or a field of a dataclass (:data:`MAXIMUM_NESTING`
  levels deep): read likewise, in a copy of the list, tuple or dict, or into the field in place,
  since a framework serialises it as the list of its items (a pydantic model's is read by the
  serialisation inspection makes of it).

Every other value is returned as it is.

A sync tool may return an awaitable (or an async iterator): pydantic-ai awaits what a plain
``def`` returns, after the call. Run then, it would act outside the call — its effects, its
output uninspected — so :func:`settled` runs it inside the call, in a loop of its own; on an
event loop's thread that cannot be done, and the call fails (``TypeError``) without running it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

#: The most items read from an iterator result.
MAXIMUM_ITEMS = 10_000
#: The deepest an iterator inside a result (in a list, a mapping, a model's field) is read.
MAXIMUM_NESTING = 16
#: The most characters (or bytes) read from a file-like result.
MAXIMUM_CHARACTERS = 1_000_000
#: The note that ends a result the door did not read to its end.
TRUNCATED = "[truncated by the audit harness: the tool's lazy result was longer than {limit}]"


def file_like(value: object) -> bool:
    """Whether ``value`` is read as a file (see the module docstring)."""
    if isinstance(value, io.IOBase):
        return True
    return callable(getattr(value, "read", None)) and callable(getattr(value, "readline", None))


def _read(value: Any) -> str | bytes:
    read: object = value.read(MAXIMUM_CHARACTERS + 1)
    data: str | bytes = b"" if read is None else read if isinstance(read, (str, bytes)) else b""
    if isinstance(read, (bytearray, memoryview)):
        data = bytes(read)
    if len(data) <= MAXIMUM_CHARACTERS:
        return data
    note = "\n" + TRUNCATED.format(limit=f"{MAXIMUM_CHARACTERS} characters")
    if isinstance(data, bytes):
        return data[:MAXIMUM_CHARACTERS] + note.encode()
    return data[:MAXIMUM_CHARACTERS] + note


def _note_items() -> str:
    return TRUNCATED.format(limit=f"{MAXIMUM_ITEMS} items")


def materialised(value: Any) -> Any:
    """``value`` read into a list or a text when it is lazy (see the module docstring)."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return value
    if file_like(value):
        return _read(value)
    if isinstance(value, Iterator):
        return _items(value, 0)
    return _nested(value, 0)


def _items(value: Iterator[Any], depth: int) -> list[Any]:
    items: list[Any] = []
    for item in value:
        if len(items) == MAXIMUM_ITEMS:
            close = getattr(value, "close", None)
            if callable(close):
                close()
            items.append(_note_items())
            break
        items.append(_nested(item, depth + 1))
    return items


def _fields(value: Any) -> list[str]:
    """The field names of a dataclass instance (none for anything else: a pydantic model's
    iterator fields are read by its serialisation, which inspection makes)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [field.name for field in dataclasses.fields(value)]
    return []


def _nested(value: Any, depth: int) -> Any:
    """``value`` with the iterators inside it read into lists: a framework serialises a
    generator in a list, a mapping or a model's field as the list of its items (pydantic does),
    so the model would read what inspection saw only as ``<generator object …>``. A list, tuple
    or dict is copied; a dataclass's field is set in place."""
    if depth >= MAXIMUM_NESTING or isinstance(value, (str, bytes, bytearray, memoryview)):
        return value
    if isinstance(value, Iterator) and not file_like(value):
        return _items(value, depth)
    if type(value) in (list, tuple):
        items = [_nested(item, depth + 1) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items if type(value) is list else tuple(items)
    if type(value) is dict:
        mapped = {key: _nested(item, depth + 1) for key, item in value.items()}
        if all(mapped[key] is item for key, item in value.items()):
            return value
        return mapped
    for name in _fields(value):
        item = getattr(value, name, None)
        seen = _nested(item, depth + 1)
        if seen is not item:
            try:
                object.__setattr__(value, name, seen)
            except (AttributeError, TypeError):
                return f"<{type(value).__name__}: a lazy field could not be read>"
    return value


async def materialised_async(value: Any) -> Any:
    """:func:`materialised`, reading an async iterator (an async generator) too."""
    if inspect.isawaitable(value) or not isinstance(value, AsyncIterator):
        return materialised(value)
    items: list[Any] = []
    async for item in value:
        if len(items) == MAXIMUM_ITEMS:
            close = getattr(value, "aclose", None)
            if callable(close):
                await close()
            items.append(_note_items())
            break
        items.append(item)
    return items


async def _awaited(value: Any) -> Any:
    while inspect.isawaitable(value):
        value = await value
    return await materialised_async(value)


def settled(value: Any) -> Any:
    """:func:`materialised`, an awaitable or async iterator run first (see the module docstring)."""
    if not inspect.isawaitable(value) and not isinstance(value, AsyncIterator):
        return materialised(value)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_awaited(value))
    close = getattr(value, "close", None)
    if inspect.iscoroutine(value) and callable(close):
        close()
    raise TypeError(
        "the sync tool returned an awaitable on an event loop's thread, where it cannot be run "
        "inside the call: declare the tool async"
    )
