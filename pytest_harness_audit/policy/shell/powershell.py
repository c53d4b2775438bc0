"""A PowerShell command as the POSIX command it amounts to, for the shell reading.

Claude Code's ``PowerShell`` tool runs its ``command`` in PowerShell. The policy reads commands
as a POSIX shell runs them; PowerShell's aliases ``rm``, ``cat``, ``cp``, ``mv`` and ``>`` read
the same, but its cmdlets (``Remove-Item -Recurse -Force DIR``) are programs the reading does not
know. :func:`as_posix` rewrites the common ones, in any case and with their parameters
abbreviated as PowerShell allows, into the POSIX commands they amount to (``rm -r -f DIR``), so
every rule about deletions, reads, writes and network access applies; the text of every other
statement is kept. PowerShell's escape character, the backtick, becomes the backslash the POSIX
reading knows (`` `" `` is a quote inside a string, not a command substitution).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

#: Cmdlets (and their built-in aliases) and the POSIX program each amounts to.
_CMDLETS = {
    **dict.fromkeys(("remove-item", "ri", "del", "erase", "rd", "rmdir"), "rm"),
    **dict.fromkeys(("get-content", "gc", "type"), "cat"),
    **dict.fromkeys(("set-content", "sc", "add-content", "ac", "out-file"), "tee"),
    **dict.fromkeys(("copy-item", "cpi", "copy"), "cp"),
    **dict.fromkeys(("move-item", "mi", "move"), "mv"),
    **dict.fromkeys(("invoke-webrequest", "iwr", "invoke-restmethod", "irm"), "curl"),
    **dict.fromkeys(("invoke-expression", "iex"), "eval"),
}
#: A cmdlet at the start of a statement (after ``;``, a pipe, ``&``, a brace or parenthesis).
_STATEMENT_CMDLET = re.compile(
    r"(^|[;|&{(\n]\s*)(" + "|".join(sorted(map(re.escape, _CMDLETS), key=len, reverse=True)) + ")"
    r"(?=\s|;|$)",
    re.IGNORECASE,
)
#: Parameters, abbreviated as PowerShell allows, and their POSIX option (``""``: dropped, the
#: value that follows being the operand).
_SWITCH_END = r"(?::\$true)?(?=\s|;|$)"
_PARAMETERS = (
    (re.compile(r"(?<=\s)-r(?:e(?:c(?:u(?:r(?:s(?:e)?)?)?)?)?)?" + _SWITCH_END, re.I), "-r"),
    (re.compile(r"(?<=\s)-fo(?:r(?:c(?:e)?)?)?" + _SWITCH_END, re.I), "-f"),
    (
        re.compile(
            r"(?<=\s)-(?:pa(?:t(?:h)?)?|literalpath|lp|pspath|destination|value|filepath)(?=\s|$)",
            re.I,
        ),
        "",
    ),
)


#: The call operator (``&``) or dot-sourcing (``.``) at the start of a statement.
_CALL_OPERATOR = re.compile(r"(^|[;|{(\n]\s*)[&.](?=\s)")
#: A script block with no block inside it.
_INNER_BLOCK = re.compile(r"\{([^{}]*)\}")
#: A quoted string (its braces are text, not a block; a backslash escapes, as rewritten).
_QUOTED = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", re.DOTALL)


def _script_blocks(text: str) -> list[str]:
    """The text of every script block (``{ … }``, not in quotes) in ``text``, innermost first:
    code that ``& { … }``, ``Invoke-Command -ScriptBlock { … }``, ``ForEach-Object { … }`` and
    the like run, which a POSIX reading of the whole does not see as commands."""
    masked = _QUOTED.sub(lambda match: " " * len(match.group()), text)
    blocks: list[str] = []
    while True:
        spans = [match.span(1) for match in _INNER_BLOCK.finditer(masked)]
        if not spans:
            return blocks
        blocks.extend(text[start:end] for start, end in spans)
        for start, end in spans:  # the block read: its braces no longer enclose the next
            masked = masked[: start - 1] + " " * (end - start + 2) + masked[end + 1 :]


def as_posix(command: str) -> str:
    """``command`` with its cmdlets, their parameters and its backtick escapes rewritten as a
    POSIX shell would read the same act; the text of each script block follows as statements
    of its own (read twice at worst, never left unread)."""
    text = re.sub(r"`(.)", r"\\\1", command, flags=re.DOTALL)
    text = "\n".join([text, *_script_blocks(text)])
    text = _CALL_OPERATOR.sub(lambda m: m.group(1), text)
    text = _STATEMENT_CMDLET.sub(lambda m: m.group(1) + _CMDLETS[m.group(2).lower()], text)
    for pattern, option in _PARAMETERS:
        text = pattern.sub(option, text)
    return text


def is_powershell(tool: str) -> bool:
    """Whether ``tool`` is the host's ``PowerShell`` tool (in any case)."""
    return tool.lower() == "powershell"


def posix_params(params: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ``PowerShell`` call's parameters with its ``command`` read as :func:`as_posix`."""
    command = params.get("command")
    if not isinstance(command, str):
        return params
    return {**params, "command": as_posix(command)}


__all__ = ["as_posix", "is_powershell", "posix_params"]
