"""Text for a reviewer's terminal: nothing an agent wrote moves the cursor or hides a line.

Records hold what agents wrote (a command, a target, an error's last line), and an escape
sequence in it would act on the terminal that prints it: erase the line of a blocked call,
rewrite a count, reorder a line (bidirectional overrides). The human-facing commands print
through :class:`VisibleControls`, which writes every such character as its ``\\uXXXX`` escape:
control characters other than tab and newline (the carriage return included), DEL, the C1
controls, and the bidirectional marks, embeddings, overrides and isolates. The escape is also a
valid JSON escape of the same character, so a ``--json`` document parses to the same data.
"""

from __future__ import annotations

from typing import TextIO

from pytest_harness_audit.wording import visible


class VisibleControls:
    """A text stream that writes through :func:`visible` to ``stream``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Write ``text``, its terminal controls made visible."""
        self.stream.write(visible(text))
        return len(text)

    def flush(self) -> None:
        """Flush the stream written to."""
        self.stream.flush()

    def isatty(self) -> bool:
        """Whether the stream written to is a terminal."""
        return self.stream.isatty()

    def __getattr__(self, name: str) -> object:
        return getattr(self.stream, name)


__all__ = ["VisibleControls", "visible"]
