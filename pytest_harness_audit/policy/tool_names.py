"""The built-in tool a tool of no category is named after, under another spelling.

Categories are given by exact tool names (``Bash`` is ``command``), so the same tool spelt
otherwise has none: ``bash``, ``BASH``, ``Bash `` with a space, ``Bаsh`` with a Cyrillic ``а``,
``Ba\\u200bsh`` with a zero-width space, fullwidth ``Ｂａｓｈ``, a namespaced ``functions.Bash`` or
``default_api:Bash`` (the forms model APIs write a function's name in), or an agent framework's
own shell tool (``bash``, ``shell``, ``run_shell``, ``terminal``, ``sh``; a Python tool given
``code``). Such a call was judged only by the rules that deny (a tool of no category may take a
``command`` that is no shell text): a network exchange or a deletion through ``bash`` was not
even flagged, and a ``powershell`` tool's ``Remove-Item -Recurse`` was read as a POSIX command,
which it is not.

:func:`spelled_tool` names the built-in tool such a name spells (``Bash`` for every shell's
name, ``PowerShell`` for PowerShell's), after :func:`canonical_name`: compatibility forms folded
(NFKC), invisible format characters and surrounding white space dropped, Latin look-alikes of
other scripts read as the Latin letter, a namespace prefix (``functions.``, ``default_api:``,
``mcp__<server>__``) taken off, the case folded and ``-`` read as ``_``. The policy judges the
call as that tool too and keeps the more severe decision
(:func:`~pytest_harness_audit.policy.views.with_spelled_view`): a spelling never makes a
call milder, and a tool that only looks like one never gets a milder decision either.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final

from pytest_harness_audit.policy.categories import BUILTIN_TOOL_CATEGORIES

#: The built-in name a shell tool's name stands for.
BASH: Final = "Bash"
#: PowerShell's tool (its commands read as the POSIX commands they amount to).
POWERSHELL: Final = "PowerShell"

#: Names of tools that run their input in a POSIX shell (canonical form: lower case, ``_``),
#: in agent frameworks, model APIs and coding hosts: ``bash`` (Anthropic's and inspect_ai's),
#: ``shell`` and ``local_shell`` (OpenAI's, Codex's), ``run_shell_command`` (Gemini CLI's),
#: ``run_terminal_cmd`` (Cursor's), ``bash_session`` (inspect_ai's), and the common others.
SHELL_NAMES: Final = frozenset(
    {
        "bash", "sh", "zsh", "shell", "terminal", "local_shell", "bash_session", "run_shell",
        "run_command", "run_cmd", "execute_command", "exec_command", "shell_exec",
        "run_shell_command", "shell_command", "execute_shell", "exec_shell", "run_bash",
        "execute_bash", "bash_exec", "run_terminal_command", "run_terminal_cmd",
        "run_in_terminal", "terminal_exec", "shell_tool", "bash_tool",
    }
)  # fmt: skip
#: Names of tools that type their input into a terminal (``tmux send-keys``): judged as
#: ``Bash`` given it. A name as plain as ``send_keys`` types into a browser as often: it counts
#: only under an MCP server named for a terminal (``mcp__tmux__send_keys``).
TERMINAL_INPUT_NAMES: Final = frozenset(
    {"tmux_send_keys", "tmux_send", "terminal_send_keys", "terminal_input", "send_terminal_input",
     "terminal_write", "write_terminal", "write_to_terminal", "send_to_terminal",
     "type_in_terminal", "pty_write", "shell_input", "send_shell_input"}
)  # fmt: skip
_TERMINAL_SERVER: Final = re.compile(r"(?i)tmux|term|pty|shell|screen|console|tty")
_TYPING_NAMES: Final = frozenset(
    {"send_keys", "send_input", "write_input", "send_text", "type_text", "input", "type", "write"}
)
#: Names of tools that run their input in PowerShell.
POWERSHELL_NAMES: Final = frozenset(
    {"powershell", "pwsh", "run_powershell", "execute_powershell", "powershell_exec"}
)
#: Names of tools that run Python code given as ``code`` (inspect_ai's ``python``, a code
#: interpreter): judged as ``python3 -c CODE`` by ``Bash``.
PYTHON_NAMES: Final = frozenset(
    {
        "python", "python3", "ipython", "run_python", "execute_python", "exec_python",
        "python_exec", "python_repl", "code_interpreter", "run_code", "execute_code",
    }
)  # fmt: skip
#: Prefixes model APIs and hosts write before a function's own name.
_NAMESPACES: Final = (
    "functions.", "functions:", "function.", "default_api:", "default_api.", "tools.",
)  # fmt: skip
#: Letters of other scripts that look like Latin ones (Cyrillic, Greek), as that Latin letter.
_LOOK_ALIKES: Final = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсхуһԁӏԛԝΑΒΕΖΗΙΚΜΝΟΡΤΥΧοκνρτυχ",
    "ABESIJKMHOPCTXYaesijopcxyhdlqwABEZHIKMNOPTYXokvptux",
)
#: Unicode categories left out of a name: format characters (zero-width) and combining marks.
_DROPPED: Final = frozenset({"Cf", "Mn", "Me"})
#: A lower-case letter or digit followed by an upper-case one: a camelCase word break.
_CAMEL_JOIN: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_EXE: Final = ".exe"
#: The built-in tools by their canonical names without separators (``webfetch``, ``web_fetch``
#: and ``WebFetch`` alike).
_BUILTIN_BY_FOLDED: Final = {
    name.casefold().replace("_", ""): name for name in BUILTIN_TOOL_CATEGORIES
}


def canonical_name(tool: str) -> str:
    """``tool`` as the name it spells (see the module docstring): ``functions.Ｂａ\\u200bsh ``
    is ``bash``, ``BashTool`` is ``bash_tool``, ``/bin/bash`` and ``bash.exe`` are ``bash``."""
    decomposed = unicodedata.normalize("NFD", unicodedata.normalize("NFKC", tool))
    # invisible format characters and combining marks (`Bash\u0301`) dropped
    text = "".join(c for c in decomposed if unicodedata.category(c) not in _DROPPED)
    text = unicodedata.normalize("NFC", text).translate(_LOOK_ALIKES).strip()
    changed = True
    while changed:
        changed = False
        lowered = text.casefold()
        for prefix in _NAMESPACES:
            if lowered.startswith(prefix) and len(text) > len(prefix):
                text, changed = text[len(prefix) :].strip(), True
                break
        if lowered.startswith("mcp__"):
            server, sep, name = text[5:].partition("__")
            if server and sep and name:
                text, changed = name.strip(), True
    text = _CAMEL_JOIN.sub("_", text.rsplit("/", 1)[-1])  # a program's path: its own name
    text = text.casefold().replace("-", "_")
    return text[: -len(_EXE)] if text.endswith(_EXE) and len(text) > len(_EXE) else text


@functools.lru_cache(maxsize=1024)
def spelled_tool(tool: str) -> str | None:
    """The built-in tool ``tool`` spells (``Bash``, ``PowerShell``, ``Read`` …), or ``None``
    when it names none or is that tool's own name."""
    name = canonical_name(tool)
    if name in SHELL_NAMES or name in PYTHON_NAMES or types_into_terminal(tool, name):
        found: str | None = BASH
    elif name in POWERSHELL_NAMES:
        found = POWERSHELL
    else:
        found = _BUILTIN_BY_FOLDED.get(name.replace("_", ""))
    return None if found == tool else found


def types_into_terminal(tool: str, name: str | None = None) -> bool:
    """Whether ``tool`` (its :func:`canonical_name`: ``name``) types its input into a terminal
    (:data:`TERMINAL_INPUT_NAMES`, or a typing tool of a terminal's MCP server)."""
    name = canonical_name(tool) if name is None else name
    if name in TERMINAL_INPUT_NAMES:
        return True
    if name not in _TYPING_NAMES or not tool.startswith("mcp__"):
        return False
    server = tool[5:].partition("__")[0]
    return _TERMINAL_SERVER.search(server) is not None


__all__ = [
    "BASH",
    "POWERSHELL",
    "POWERSHELL_NAMES",
    "PYTHON_NAMES",
    "SHELL_NAMES",
    "TERMINAL_INPUT_NAMES",
    "canonical_name",
    "spelled_tool",
    "types_into_terminal",
]
