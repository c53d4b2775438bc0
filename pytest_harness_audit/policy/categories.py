"""Tool → category classification (DESIGN §4 "Categories")."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

FILE_READ: Final = "file_read"
FILE_WRITE: Final = "file_write"
COMMAND: Final = "command"
NETWORK: Final = "network"
DELEGATION: Final = "delegation"
STATE: Final = "state"
MCP: Final = "mcp"
MESSAGE: Final = "message"
UNKNOWN: Final = "unknown"
CREDENTIAL_ACCESS: Final = "credential_access"

#: Every category a rule may name.
KNOWN_CATEGORIES: Final = frozenset(
    {
        FILE_READ,
        FILE_WRITE,
        COMMAND,
        NETWORK,
        DELEGATION,
        STATE,
        MCP,
        MESSAGE,
        UNKNOWN,
        CREDENTIAL_ACCESS,
    }
)

BUILTIN_TOOL_CATEGORIES: Final[Mapping[str, str]] = {
    "Read": FILE_READ,
    "Glob": FILE_READ,
    "Grep": FILE_READ,
    "Write": FILE_WRITE,
    "Edit": FILE_WRITE,
    "NotebookEdit": FILE_WRITE,
    # further file tools of the Claude Code host (its hooks name them)
    "MultiEdit": FILE_WRITE,
    "NotebookRead": FILE_READ,
    "LS": FILE_READ,
    "Bash": COMMAND,
    "WebFetch": NETWORK,
    "WebSearch": NETWORK,
    "Task": DELEGATION,
    # the host's subagent tool (named ``Task`` before Claude Code 2.1.63), and its message to
    # another agent of the team
    "Agent": DELEGATION,
    "SendMessage": MESSAGE,
    "TodoWrite": STATE,
    # the host's own bookkeeping: its task list, plan mode and questions to the user
    "TodoRead": STATE,
    "TaskCreate": STATE,
    "TaskUpdate": STATE,
    "TaskList": STATE,
    "TaskGet": STATE,
    "EnterPlanMode": STATE,
    "ExitPlanMode": STATE,
    "AskUserQuestion": STATE,
    "send_message": MESSAGE,
}

#: Built-in categories of the reference MCP servers' tools, keyed by the tool's own name
#: (the part after ``mcp__<server>__``). ``mcp-server-git`` and
#: ``@modelcontextprotocol/server-filesystem``.
BUILTIN_MCP_TOOL_CATEGORIES: Final[Mapping[str, str]] = {
    "git_status": FILE_READ,
    "git_diff": FILE_READ,
    "git_diff_unstaged": FILE_READ,
    "git_diff_staged": FILE_READ,
    "git_log": FILE_READ,
    "git_show": FILE_READ,
    "git_branch": FILE_READ,
    "git_add": FILE_WRITE,
    "git_commit": FILE_WRITE,
    "git_reset": FILE_WRITE,
    "git_checkout": FILE_WRITE,
    "git_create_branch": FILE_WRITE,
    "read_file": FILE_READ,
    "read_text_file": FILE_READ,
    "read_media_file": FILE_READ,
    "read_multiple_files": FILE_READ,
    "list_directory": FILE_READ,
    "list_directory_with_sizes": FILE_READ,
    "list_allowed_directories": FILE_READ,
    "directory_tree": FILE_READ,
    "search_files": FILE_READ,
    "get_file_info": FILE_READ,
    "write_file": FILE_WRITE,
    "edit_file": FILE_WRITE,
    "create_directory": FILE_WRITE,
    "move_file": FILE_WRITE,
    # the recording proxy judges an upstream's resource read as ``mcp__<server>__resources/read``
    "resources/read": FILE_READ,
}


#: Tool names (globs) whose ``command``/``cmd`` parameter is a shell command, read like
#: ``Bash``'s, in any case (``mcp__shell__Bash``); a policy adds more with ``commandTools:``.
#: ``PowerShell`` is the Claude Code host's second shell tool (``{"command": …}``, as ``Bash``):
#: its aliases (``rm``, ``cat``, ``cp``, ``mv``, ``>``) read as the POSIX commands they stand for.
DEFAULT_COMMAND_TOOLS: Final = (
    "PowerShell",
    "mcp__*__run",
    "mcp__*__run_command",
    "mcp__*__execute_command",
    "mcp__*__exec_command",
    "mcp__*__shell",
    "mcp__*__run_shell",
    "mcp__*__shell_exec",
    "mcp__*__exec",
    "mcp__*__execute",
    "mcp__*__bash",
    "mcp__*__terminal",
    "mcp__*__run_shell_command",
    "mcp__*__shell_command",
    "mcp__*__execute_shell",
    "mcp__*__exec_shell",
    "mcp__*__run_bash",
    "mcp__*__execute_bash",
    "mcp__*__start_process",
    "mcp__*__run_terminal_command",
    "mcp__*__run_in_terminal",
)


def mcp_tool_parts(tool: str) -> tuple[str, str] | None:
    """Split ``mcp__<server>__<tool>`` into ``(server, tool)``; ``None`` for other names."""
    if not tool.startswith("mcp__"):
        return None
    server, sep, name = tool[5:].partition("__")
    if not sep or not server or not name:
        return None
    return server, name


def builtin_category(tool: str) -> str:
    """Category of ``tool`` from the built-in tables only (no policy mapping)."""
    category = BUILTIN_TOOL_CATEGORIES.get(tool)
    if category is not None:
        return category
    parts = mcp_tool_parts(tool)
    if parts is not None:
        return BUILTIN_MCP_TOOL_CATEGORIES.get(parts[1], MCP)
    return UNKNOWN
