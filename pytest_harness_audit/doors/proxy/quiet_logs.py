"""One line, not a traceback, for what the MCP SDK's client logs about a misbehaving upstream.

The SDK logs an upstream's bad output (a stdout line that is not JSON-RPC, an SSE event it
cannot parse) with the full traceback of the parse error. That is bad input from the upstream,
not a fault of the proxy: the proxy's stderr gets one line naming what was wrong instead.
That line quotes the upstream's output, which may hold a known secret of the workspace (an
upstream printing its settings): every running proxy adds its redaction (:func:`redacting`),
so the line is logged with the secret redacted — a log is read outside the session.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from pydantic import ValidationError

#: The SDK loggers that report an upstream's malformed traffic.
UPSTREAM_LOGGERS = ("mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.session")
_EXCERPT = 120


class OneLine(logging.Filter):
    """Folds a record's exception into its message (one line) and drops the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; it is always kept."""
        if record.exc_info and record.exc_info[1] is not None:
            detail = describe(record.exc_info[1])
            record.msg = f"harness-audit proxy: {record.getMessage()} ({detail})"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        if _REDACTIONS:
            text = record.getMessage()
            shown = _redacted(text)
            if shown != text:
                record.msg, record.args = shown, None
        return True


_REDACTIONS: list[Callable[[str], str]] = []
_UNREDACTABLE = "harness-audit proxy: an upstream's output (withheld: it could not be redacted)"


def _redacted(text: str) -> str:
    for redact in list(_REDACTIONS):
        try:
            text = redact(text)
        except Exception:
            return _UNREDACTABLE
    return text


@contextmanager
def redacting(redact: Callable[[str], str] | None) -> Iterator[None]:
    """Redact what the SDK logs about upstreams with ``redact`` (a proxy's known secrets) for
    the duration of the block."""
    if redact is None:
        yield
        return
    _REDACTIONS.append(redact)
    try:
        yield
    finally:
        _REDACTIONS.remove(redact)


def describe(exc: BaseException) -> str:
    """``Type: first line`` of ``exc``; for a validation error, its first error and input."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        shown = repr(first.get("input"))
        if len(shown) > _EXCERPT:
            shown = shown[:_EXCERPT] + "…"
        return f"{first.get('msg', 'invalid')}: {shown}"
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


_INSTALLED = OneLine()


def install() -> None:
    """Put the filter on the SDK's upstream-facing loggers (once)."""
    for name in UPSTREAM_LOGGERS:
        logger = logging.getLogger(name)
        if _INSTALLED not in logger.filters:
            logger.addFilter(_INSTALLED)
