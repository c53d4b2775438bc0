"""The text of an exception a function tool raised, redacted before the framework reads it.

A framework hands the model what it renders of a tool's exception: ``str(exc)`` (the OpenAI
Agents SDK's ``failure_error_function``), ``repr(exc)``, its ``args``. Those are often built
from more than the string arguments: a ``subprocess.CalledProcessError`` shows its command (a
list), an ``OSError`` its ``filename``, an exception with its own ``__str__`` an attribute. So
the known secrets are redacted in the ``args`` (strings inside lists and tuples too) and in the
attributes such texts are built from (:data:`ATTRIBUTES`); when ``str(exc)`` or ``repr(exc)``
still holds one after that, the exception is replaced by one of the same class name (a
``RuntimeError`` subclass) whose message is the redacted ``str(exc)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Attributes the standard library's exceptions (and many others) build their text from.
ATTRIBUTES = ("filename", "filename2", "cmd", "output", "stderr", "stdout", "strerror", "message")
#: Nesting of lists and tuples inside an argument or attribute that is redacted.
MAX_DEPTH = 8

Redact = Callable[[str], str]


def _redacted(value: Any, redact: Redact, depth: int = 0) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes):
        text = value.decode("latin-1")
        shown = redact(text)
        return value if shown == text else shown.encode("latin-1")
    if depth < MAX_DEPTH and isinstance(value, (list, tuple)):
        items = [_redacted(item, redact, depth + 1) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return tuple(items) if isinstance(value, tuple) else items
    return value


def _holds_secret(text: str, redact: Redact) -> bool:
    return redact(text) != text


def _render(exc: BaseException, show: Callable[[BaseException], str]) -> str:
    try:
        return show(exc)
    except Exception:  # a broken __str__ renders as nothing the framework can show either
        return ""


def shown_exception(exc: BaseException, redact: Redact) -> BaseException:
    """``exc`` with its text redacted in place, or a replacement when its rendering still holds
    a known secret (see the module doc)."""
    try:
        args = _redacted(exc.args, redact)
        if args is not exc.args:
            exc.args = args
    except Exception:  # an exception that will not take new args keeps them: checked below
        pass
    for name in ATTRIBUTES:
        try:
            value = getattr(exc, name, None)
            if value is None:
                continue
            shown = _redacted(value, redact)
            if shown is not value and shown != value:
                setattr(exc, name, shown)
        except Exception:  # a read-only attribute: checked below
            continue
    text = _render(exc, str)
    if not _holds_secret(text, redact) and not _holds_secret(_render(exc, repr), redact):
        return exc
    kind = type(exc)
    same_name = type(kind.__name__, (RuntimeError,), {"__module__": kind.__module__})
    same_name.__qualname__ = kind.__qualname__
    replacement: BaseException = same_name(redact(text))
    replacement.__traceback__ = None
    return replacement
