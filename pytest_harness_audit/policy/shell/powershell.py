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
import shlex
from collections.abc import Mapping
from typing import Any, Final

from pytest_harness_audit.policy.shell.powershell_names import CMDLETS, PARAMETERS
from pytest_harness_audit.policy.shell.powershell_routes import routes
from pytest_harness_audit.policy.shell.quoted_spans import sub_quoted

#: A cmdlet at the start of a statement (after ``;``, a pipe, ``&``, a brace or parenthesis).
_STATEMENT_CMDLET: Final = re.compile(
    r"(^|[;|&{(\n][^\S\n]*)("
    + "|".join(sorted(map(re.escape, CMDLETS), key=len, reverse=True))
    + ")"
    r"(?=\s|;|$)",
    re.IGNORECASE,
)
#: The environment as PowerShell names it (``$env:USERPROFILE``, ``${env:HOME}``).
_ENVIRONMENT: Final = re.compile(r"\$(?:\{env:(\w+)\}|env:(\w+))", re.I)
_HOMES: Final = frozenset({"userprofile", "homepath", "home"})
#: A variable of a drive other than the environment's: ``${c:.env}`` is that file's text.
_DRIVE_VARIABLE: Final = re.compile(
    r"\$\{(?!env:|variable:|function:|alias:)(\w+:)([^}:]+)\}", re.I
)
#: Most texts a command runs read as PowerShell (``iex`` of ``iex`` …).
_MAX_DEPTH: Final = 6
#: How a statement says PowerShell does what the reading cannot know: the PowerShell
#: launcher's reading (:mod:`.launchers`) takes a value of this mark as the reason.
UNKNOWN_MARK: Final = "?"


#: The call operator (``&``) or dot-sourcing (``.``) at the start of a statement.
_CALL_OPERATOR: Final = re.compile(r"(^|[;|{(\n][^\S\n]*)[&.](?=\s)")
#: A script block with no block inside it.
_INNER_BLOCK: Final = re.compile(r"\{([^{}]*)\}")
#: A quoted string (its braces are text, not a block; a backslash escapes, as rewritten).
_QUOTED: Final = re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", re.DOTALL)


def _script_blocks(text: str) -> list[str]:
    """The text of every script block (``{ … }``, not in quotes) in ``text``, innermost first:
    code that ``& { … }``, ``Invoke-Command -ScriptBlock { … }``, ``ForEach-Object { … }`` and
    the like run, which a POSIX reading of the whole does not see as commands."""
    masked = sub_quoted(_QUOTED, lambda match: " " * len(match.group()), text)
    blocks: list[str] = []
    while True:
        spans = [match.span(1) for match in _INNER_BLOCK.finditer(masked)]
        if not spans:
            return blocks
        blocks.extend(text[start:end] for start, end in spans)
        for start, end in spans:  # the block read: its braces no longer enclose the next
            masked = masked[: start - 1] + " " * (end - start + 2) + masked[end + 1 :]


def _environment(match: re.Match[str]) -> str:
    name = match.group(1) or match.group(2)
    return "$HOME" if name.lower() in _HOMES else "$" + name


def as_posix(command: str, depth: int = 0) -> str:
    """``command`` with its cmdlets, their parameters and its backtick escapes rewritten as a
    POSIX shell would read the same act; the text of each script block follows as statements
    of its own (read twice at worst, never left unread), then what the commands do that the
    rewriting does not show (:mod:`.powershell_routes`): .NET calls, code run from strings,
    programs started, piped objects, and a statement the reading takes as unreadable for each
    act it cannot know."""
    too_much = _beyond_reading(command)
    if too_much is not None:  # read as text alone: the POSIX reading bounds its own work
        return "\n".join([_rewritten(command, blocks=False), unknown_statement(too_much)])
    command = _normalized(command)
    try:
        found = routes(command)
    except Exception:
        return "\n".join([_rewritten(command), unknown_statement("the PowerShell reading failed")])
    extra = list(found.posix)
    for script in found.scripts:
        if depth < _MAX_DEPTH:
            extra.append(as_posix(script, depth + 1))
        else:
            found.unknown.append("PowerShell code nested too deep")
    extra.extend(unknown_statement(why) for why in dict.fromkeys(found.unknown))
    text = _rewritten(command)
    seen = {line.strip() for line in text.split("\n")}  # a statement read once is enough
    return "\n".join([text, *(line for line in dict.fromkeys(extra) if line.strip() not in seen)])


#: The longest command read as PowerShell (as the POSIX reading's ``MAX_CHARS``).
_MAX_CHARS: Final = 64_000
#: The deepest nesting of brackets read as PowerShell: the reading goes over a nested part
#: once for each level around it.
_MAX_NESTING: Final = 24
_NOT_BRACKETS: Final = re.compile(r"[^()\[\]{}]+")


def _beyond_reading(command: str) -> str | None:
    """Why ``command`` is too long or too deeply nested to be read as PowerShell (its reading
    would cost more than a gate may spend on one call), else ``None``. Brackets in quotes
    count too: at worst an odd command is unreadable."""
    if len(command) > _MAX_CHARS:
        return "PowerShell command too long"
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", command):
        depth = depth + 1 if bracket in "([{" else max(depth - 1, 0)
        if depth > _MAX_NESTING:
            return "PowerShell command nested too deep"
    return None


#: What PowerShell reads as ASCII: its other quotes, dashes and spaces.
_UNICODE: Final = str.maketrans(
    {**dict.fromkeys("\u2018\u2019\u201a\u201b", "'"), **dict.fromkeys("\u201c\u201d\u201e", '"'),
     **dict.fromkeys("\u2013\u2014\u2015", "-"),
     **dict.fromkeys("\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                     "\u2009\u200a\u202f\u205f\u3000\u0085\f\v", " ")}
)  # fmt: skip
#: A command named with its module: ``Microsoft.PowerShell.Management\Remove-Item``.
_MODULE_QUALIFIED: Final = re.compile(r"(^|[;|&{(\n][^\S\n]*)[\w.]+\\(?=[A-Za-z]+-[A-Za-z])")


#: A path with its provider: ``FileSystem::.env``, ``Microsoft.PowerShell.Core\FileSystem::…``.
_PROVIDER_QUALIFIED: Final = re.compile(r"(?:Microsoft\.PowerShell\.Core[\\/])?FileSystem::", re.I)
#: The head of an assignment at a statement's start (``$x =``, ``[string]$x +=``, ``$a, $b =``).
_ASSIGNMENT: Final = re.compile(
    r"(^|[;|{(\n][^\S\n]*)(?:\[[\w.\[\] ]+\]\s*)?\$[\w:{}]+(?:\s*,\s*\$[\w:{}]+)*\s*[-+*/%]?="
    r"(?!=)\s*(?=[A-Za-z&.])"
)


def _normalized(command: str) -> str:
    """``command`` as PowerShell reads it, in the forms the rewriting knows: ASCII quotes,
    dashes and spaces, block comments (``<# … #>``) gone, a backtick before a letter that is no
    escape dropped (``Re`move-Item`` is ``Remove-Item``), module-qualified names bare."""
    text = command.translate(_UNICODE)
    text = re.sub(r"<#.*?(?:#>|$)", " ", text, flags=re.DOTALL)
    text = re.sub(r"`(?=[c-dg-mo-qswx-zA-Z])", "", text)
    text = _PROVIDER_QUALIFIED.sub("", text)
    return _MODULE_QUALIFIED.sub(lambda m: m.group(1), text)


def unknown_statement(why: str) -> str:
    """A POSIX statement the reading takes as unreadable, for ``why``."""
    return "pwsh -EncodedCommand " + shlex.quote(UNKNOWN_MARK + why)


def _rewritten(command: str, *, blocks: bool = True) -> str:
    """``command`` with its cmdlets, parameters, paths and escapes rewritten (and, with
    ``blocks``, the text of its script blocks after it)."""
    # `$x = Remove-Item …`: the command after an assignment runs as one at a statement's start
    text = _ASSIGNMENT.sub(lambda m: m.group(1), command)
    text = text.replace("\\", "/")  # PowerShell's paths: `\` is no escape there
    text = _DRIVE_VARIABLE.sub(lambda m: "$(cat " + shlex.quote(m.group(2)) + ")", text)
    text = _ENVIRONMENT.sub(_environment, text)
    text = re.sub(r"\$home\b", "$HOME", text, flags=re.I)
    text = re.sub(r"`(.)", r"\\\1", text, flags=re.DOTALL)
    if blocks:
        text = "\n".join([text, *_script_blocks(text)])
    text = _CALL_OPERATOR.sub(lambda m: m.group(1), text)
    text = _STATEMENT_CMDLET.sub(lambda m: m.group(1) + CMDLETS[m.group(2).lower()], text)
    for pattern, option in PARAMETERS:
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


__all__ = ["UNKNOWN_MARK", "as_posix", "is_powershell", "posix_params", "unknown_statement"]
