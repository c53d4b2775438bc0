"""A real MCP server that runs tool calls as tasks (MCP 2025-11-25), as a proxy upstream.

Run as ``python tasks_server.py`` (stdio, in the session's workspace). It announces the
``tasks`` capability (``tools/call`` augmentation, ``tasks/list``, ``tasks/cancel``) and serves
``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel``. Tools (all with
``taskSupport: optional``): ``write_note`` writes ``text`` to the workspace file ``path``;
``background_note`` does the same but always answers with a task, asked for or not (as no
server may); ``show_settings`` answers with the workspace's ``.env`` (and pushes a
``notifications/tasks/status`` nobody asked for, its message that text); ``echo`` answers with
``text``. ``logging/setLevel`` to ``debug`` appends ``DEBUG=1`` to the workspace's ``.env``: an
effect of a request that is no tool call.

A ``tools/call`` carrying ``task`` runs the tool at once, keeps its result for ``tasks/result``,
sends ``notifications/tasks/status`` (its status message: the result's text) and answers with a
``CreateTaskResult``; without ``task`` the call is answered with the result itself. Every
request it receives is appended as a JSON line ``{"method": …, "task": bool}`` to
``$RECEIVED`` when that variable is set, so a test can see what reached it.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

ROOT = Path.cwd().resolve()
#: The tool run as a task even when the call did not ask for one (against the specification).
UNASKED = "background_note"
TASKS: dict[str, tuple[types.Task, dict[str, Any]]] = {}
OPTIONAL = types.ToolExecution(task_support="optional")
TEXT_INPUT = {"type": "object", "properties": {"text": {"type": "string"}}}
WRITE_INPUT = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
    "required": ["path", "text"],
}
TOOLS = [
    types.Tool(name="write_note", input_schema=WRITE_INPUT, execution=OPTIONAL),
    types.Tool(name="show_settings", input_schema={"type": "object"}, execution=OPTIONAL),
    types.Tool(name="echo", input_schema=TEXT_INPUT, execution=OPTIONAL),
    types.Tool(name=UNASKED, input_schema=WRITE_INPUT, execution=OPTIONAL),
]


def _note(method: str, params: Any) -> None:
    target = os.environ.get("RECEIVED")
    if target:
        task = isinstance(params, dict) and params.get("task") is not None
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"method": method, "task": task}) + "\n")


def _run(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
    if name in ("write_note", UNASKED):
        (ROOT / str(arguments["path"])).write_text(str(arguments["text"]), encoding="utf-8")
        text = f"wrote {arguments['path']}"
    elif name == "show_settings":
        text = (ROOT / ".env").read_text(encoding="utf-8")
    elif name == "echo":
        text = str(arguments.get("text", ""))
    else:
        return types.CallToolResult(
            content=[types.TextContent(text=f"Unknown tool: {name}")], is_error=True
        )
    return types.CallToolResult(content=[types.TextContent(text=text)])


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _unasked_task(result: types.CallToolResult) -> types.Task:
    text = "".join(getattr(block, "text", "") for block in result.content)
    return types.Task(
        task_id="unasked",
        status="working",
        status_message=text,
        created_at=_now(),
        last_updated_at=_now(),
        ttl=None,
    )


def _status(task: types.Task) -> Any:
    return types.TaskStatusNotification(
        params=types.TaskStatusNotificationParams(**task.model_dump())
    )


async def _run_as_task(ctx: ServerRequestContext[Any, Any], params: dict[str, Any]) -> Any:
    result = _run(str(params.get("name")), dict(params.get("arguments") or {}))
    text = "".join(getattr(block, "text", "") for block in result.content)
    task = types.Task(
        task_id=f"task-{len(TASKS) + 1}",
        status="completed",
        status_message=text,
        created_at=_now(),
        last_updated_at=_now(),
        ttl=60_000,
        poll_interval=100,
    )
    TASKS[task.task_id] = (task, result.model_dump(by_alias=True, mode="json", exclude_none=True))
    await ctx.session.send_notification(_status(task))
    return {"task": task.model_dump(by_alias=True, mode="json", exclude_none=True)}


async def _tasks_first(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> Any:
    """Serve a task-augmented ``tools/call`` before the SDK's ``tools/call`` surface does."""
    if ctx.request_id is not None:
        _note(ctx.method, ctx.params)
    params = ctx.params if isinstance(ctx.params, dict) else {}
    if ctx.method == "tools/call" and (params.get("task") or params.get("name") == UNASKED):
        return await _run_as_task(ctx, params)
    return await call_next(ctx)


class TasksServer(Server[Any]):
    """A low-level server that also announces the ``tasks`` capability."""

    def get_capabilities(self, *args: Any, **kwargs: Any) -> types.ServerCapabilities:
        """The handlers' capabilities plus ``tasks``."""
        capabilities = super().get_capabilities(*args, **kwargs)
        tasks = types.ServerTasksCapability(
            list=types.TasksListCapability(),
            cancel=types.TasksCancelCapability(),
            requests=types.ServerTasksRequestsCapability(
                tools=types.TasksToolsCapability(call=types.TasksCallCapability())
            ),
        )
        return capabilities.model_copy(update={"tasks": tasks})


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    result = _run(params.name, dict(params.arguments or {}))
    if params.name == "show_settings":
        # a status nobody asked for: what a plain call's client must not hear either
        await ctx.session.send_notification(_status(_unasked_task(result)))
    return result


async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
    if params.level == "debug":
        with (ROOT / ".env").open("a", encoding="utf-8") as env:
            env.write("DEBUG=1\n")
    return types.EmptyResult()


def _task(params: Any) -> tuple[types.Task, dict[str, Any]]:
    return TASKS[str(params.task_id)]


async def get_task(ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
    return _task(params)[0].model_dump(by_alias=True, mode="json", exclude_none=True)


async def task_result(ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
    return _task(params)[1]


async def list_tasks(ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
    tasks = [task.model_dump(by_alias=True, mode="json") for task, _ in TASKS.values()]
    return {"tasks": tasks}


async def cancel_task(ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
    task = _task(params)[0].model_copy(update={"status": "cancelled"})
    return task.model_dump(by_alias=True, mode="json", exclude_none=True)


server = TasksServer("tasks-upstream", on_list_tools=list_tools, on_call_tool=call_tool)
server.middleware = [_tasks_first]
server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, task_result)
server.add_request_handler("tasks/list", types.PaginatedRequestParams, list_tasks)
server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
