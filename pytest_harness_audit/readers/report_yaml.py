"""One YAML value on one line, with nothing an agent wrote able to forge or hide a line.

A report line holds text an agent chose (a command, a path, a refusal reason). PyYAML's own
flow style writes a string's line breaks as real ones (a single-quoted scalar folds onto the
next lines), and with ``allow_unicode`` it leaves the line and paragraph separators, NEL and the
bidirectional overrides as they are: a command ending ``#\\n\\nverdict: PASS`` showed a line
``verdict: PASS`` in the snapshot file and its diff, and an override reordered the rest of the
line (the ``verdict: FAIL`` after it). Here a string holding any such character is written
double-quoted, each of them as its escape (``\\n``, ``\\u202e``): the YAML loads to the same
text, and the document keeps one line per record.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml

from pytest_harness_audit.wording import HIDDEN

#: Characters a report writes as escapes: line breaks and tab, the terminal and bidirectional
#: controls of ``wording.HIDDEN``, the zero-width format characters (an invisible difference
#: between two names), and what YAML cannot hold raw (surrogates, U+FFFE/U+FFFF).
_ESCAPED = re.compile(
    HIDDEN.pattern[:-1] + "\t\n\r\u200b-\u200d\u2060-\u2064\ufeff\ud800-\udfff\ufffe\uffff" + "]"
)
_SHORT = {"\t": "\\t", "\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _escape(char: str) -> str:
    short = _SHORT.get(char)
    if short is not None:
        return short
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar, every character of :data:`_ESCAPED` (and the
    quote and backslash) escaped, everything else as written."""
    return '"' + re.sub(r'["\\]|' + _ESCAPED.pattern, lambda m: _escape(m.group()), text) + '"'


class _OneLineDumper(yaml.SafeDumper):
    """``SafeDumper`` whose strings holding a character of :data:`_ESCAPED` are written by
    :func:`quoted`."""

    def choose_scalar_style(self) -> str:
        event = self.event
        if isinstance(event, yaml.ScalarEvent) and _ESCAPED.search(event.value):
            return '"'
        style: str = super().choose_scalar_style()
        return style

    def write_double_quoted(self, text: str, split: bool = True) -> None:
        self.write_indicator(quoted(text), True)


def flow(value: Any) -> str:
    """``value`` as one YAML line (flow style for collections), agent text unable to break it."""
    text = yaml.dump(
        value,
        Dumper=_OneLineDumper,
        default_flow_style=True,
        sort_keys=False,
        allow_unicode=True,
        width=math.inf,
    )
    return text.removesuffix("\n...\n").rstrip("\n")
