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

Every other value is returned as it is.

A sync tool may return an awaitable (or an async iterator): pydantic-ai awaits what a plain
``def`` returns, after the call. Run then, it would act outside the call — its effects, its
output uninspected — so :func:`settled` runs it inside the call, in a loop of its own; on an
event loop's thread that cannot be done, and the call fails (``TypeError``) without running it.
"""

from __future__ import annotations

import asyncio
import inspect
import io
from collections.abc import AsyncIterator, Iterator
from typing import Any

#: The most items read from an iterator result.
MAXIMUM_ITEMS = 10_000
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
        items: list[Any] = []
        for item in value:
            if len(items) == MAXIMUM_ITEMS:
                close = getattr(value, "close", None)
                if callable(close):
                    close()
                items.append(_note_items())
                break
            items.append(item)
        return items
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
