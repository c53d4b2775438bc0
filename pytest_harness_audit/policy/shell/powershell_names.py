"""PowerShell's cmdlets and parameters, and the POSIX programs and options they amount to.

Both readings of a PowerShell command use them: the rewriting of its text
(:func:`.powershell.as_posix`) and the POSIX statement made from each command as PowerShell
splits it (:mod:`.powershell_canonical`).
"""

from __future__ import annotations

import re
from typing import Final

#: Cmdlets (and their built-in aliases) and the POSIX program each amounts to.
CMDLETS: Final = {
    **dict.fromkeys(("remove-item", "ri", "del", "erase", "rd", "rmdir"), "rm"),
    **dict.fromkeys(("get-content", "gc", "type"), "cat"),
    **dict.fromkeys(("set-content", "sc", "add-content", "ac", "out-file"), "tee"),
    **dict.fromkeys(("copy-item", "cpi", "copy"), "cp"),
    **dict.fromkeys(("move-item", "mi", "move"), "mv"),
    **dict.fromkeys(("invoke-webrequest", "iwr", "invoke-restmethod", "irm"), "curl"),
    **dict.fromkeys(("invoke-expression", "iex"), "eval"),
    **dict.fromkeys(("clear-content", "clc"), "truncate -s 0"),
    **dict.fromkeys(("tee-object",), "tee"),
    **dict.fromkeys(("rename-item", "rni", "ren"), "mv"),
    **dict.fromkeys(("select-string", "sls"), "grep"),
    **dict.fromkeys(("set-location", "sl", "chdir", "push-location", "pushd"), "cd"),
    **dict.fromkeys(("start-bitstransfer", "send-mailmessage", "test-netconnection", "tnc",
                     "resolve-dnsname"), "curl"),
    # what looks at a file and not into it (its existence, attributes, listing, full name)
    **dict.fromkeys(("test-path",), "test -e"),
    **dict.fromkeys(("get-item", "gi", "get-itemproperty", "gp"), "stat"),
    **dict.fromkeys(("get-childitem", "gci", "dir"), "ls"),
    **dict.fromkeys(("resolve-path", "rvpa"), "realpath"),
}  # fmt: skip
#: Parameters, abbreviated as PowerShell allows, and their POSIX option (``""``: dropped, the
#: value that follows being the operand).
_SWITCH_END: Final = r"(?::[^\s;]*)?(?=\s|;|$)"  # `-Recurse:$true`, `-Recurse:1`: set
PARAMETERS: Final = (
    (re.compile(r"(?<=\s)-r(?:e(?:c(?:u(?:r(?:s(?:e)?)?)?)?)?)?" + _SWITCH_END, re.I), "-r"),
    (re.compile(r"(?<=\s)-fo(?:r(?:c(?:e)?)?)?" + _SWITCH_END, re.I), "-f"),
    (
        re.compile(
            r"(?<=\s)-(?:pa(?:t(?:h)?)?|literalpath|lp|pspath|destination|value|filepath)(?=\s|$)",
            re.I,
        ),
        "",
    ),
    (
        re.compile(
            r"(?<=\s)-(?:pa(?:t(?:h)?)?|literalpath|lp|pspath|destination|value|filepath):", re.I
        ),
        "",
    ),
    (re.compile(r"(?<=\s)-pattern(?=\s|$)", re.I), "-e"),
)


def posix_option(parameter: str) -> str:
    """A parameter word (``-Recurse``, ``-r:$true``, ``-Path:x``) as its POSIX option (``-r``;
    ``""`` for one dropped before its value; the value of a ``-Path:x`` form), else as it is."""
    text = " " + parameter
    for pattern, option in PARAMETERS:
        text = pattern.sub(option, text)
    return text.strip()


__all__ = ["CMDLETS", "PARAMETERS", "posix_option"]
