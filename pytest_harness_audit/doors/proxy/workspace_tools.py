"""The harness's workspace tools (Read, Write, Edit, Bash, Glob, Grep) as proxy local tools.

With ``--workspace DIR`` an agent that only speaks MCP can work on the workspace: each tool runs
through the same ``ToolBox`` the scripted door uses, confined to ``DIR``. The proxy gates and
records these calls like any other (they are not self-recording).

A cancelled ``Bash`` call is stopped: its whole process group gets ``SIGTERM``, then ``SIGKILL``,
and the proxy records it once it has ended. The other tools are quick and run to their end.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcp_types as types

from pytest_harness_audit.doors.proxy.local_tools import LocalTool, to_tool_result
from pytest_harness_audit.tools import ToolBox, ToolOutcome

WORKSPACE_TOOL_NAMES = ("Read", "Write", "Edit", "Bash", "Glob", "Grep")

_STRING = {"type": "string"}
_INTEGER = {"type": "integer", "minimum": 1}
_BOOLEAN = {"type": "boolean"}


def _schema(required: list[str], **properties: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name.replace("_dash_", "-"): dict(p) for name, p in properties.items()},
        "required": required,
        "additionalProperties": False,
    }


_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "Read": (
        "Read a text file of the workspace (numbered lines; offset/limit in lines).",
        _schema(["file_path"], file_path=_STRING, offset=_INTEGER, limit=_INTEGER),
    ),
    "Write": (
        "Create or overwrite a file of the workspace.",
        _schema(["file_path", "content"], file_path=_STRING, content=_STRING),
    ),
    "Edit": (
        "Replace old_string by new_string in a file (exactly once unless replace_all).",
        _schema(
            ["file_path", "old_string", "new_string"],
            file_path=_STRING,
            old_string=_STRING,
            new_string=_STRING,
            replace_all=_BOOLEAN,
        ),
    ),
    "Bash": (
        "Run a shell command in the workspace (timeout in milliseconds).",
        _schema(
            ["command"],
            command=_STRING,
            timeout=_INTEGER,
            description=_STRING,
            run_in_background=_BOOLEAN,
        ),
    ),
    "Glob": (
        "List workspace files matching a glob pattern (e.g. '**/*.py').",
        _schema(["pattern"], pattern=_STRING, path=_STRING),
    ),
    "Grep": (
        "Search workspace files for a regular expression.",
        _schema(
            ["pattern"],
            pattern=_STRING,
            path=_STRING,
            glob=_STRING,
            type=_STRING,
            output_mode={"type": "string", "enum": ["files_with_matches", "content", "count"]},
            _dash_i=_BOOLEAN,
            _dash_n=_BOOLEAN,
            _dash_A={"type": "integer", "minimum": 0},
            _dash_B={"type": "integer", "minimum": 0},
            _dash_C={"type": "integer", "minimum": 0},
            multiline=_BOOLEAN,
            head_limit=_INTEGER,
        ),
    ),
}


def workspace_tools(root: Path, toolbox: ToolBox | None = None) -> list[LocalTool]:
    """Local tools running ``Read``…``Grep`` of ``toolbox`` (a new one on ``root`` by default)."""
    box = toolbox if toolbox is not None else ToolBox(root)
    return [
        LocalTool(name, description, schema, _runner(box, name), cancellable=name in _CANCELLABLE)
        for name, (description, schema) in _TOOLS.items()
    ]


# What a cancellation can stop; the other tools end within moments anyway.
_CANCELLABLE = frozenset({"Bash"})


def _runner(box: ToolBox, name: str) -> Any:
    if name in _CANCELLABLE:

        def run_cancellable(
            arguments: dict[str, Any], *, cancel: threading.Event
        ) -> types.CallToolResult:
            return outcome_result(box.run(name, arguments, cancel=cancel))

        return run_cancellable

    def run(arguments: dict[str, Any]) -> types.CallToolResult:
        return outcome_result(box.run(name, arguments))

    return run


def outcome_result(outcome: ToolOutcome) -> types.CallToolResult:
    """A workspace ``ToolOutcome`` as an MCP tool result (errors carry their message)."""
    if outcome.ok:
        return to_tool_result(outcome.output)
    text = outcome.error_message or "the tool failed"
    if isinstance(outcome.output, str) and outcome.output:
        text = f"{text}\n{outcome.output}"
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)
