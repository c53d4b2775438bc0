"""The reference scripted agent: plays a scenario through MCP, like a real agent would.

    HARNESS_AUDIT_MCP_CONFIG=mcp.json python -m pytest_harness_audit.agents.scripted SCENARIO

It reads the standard ``{"mcpServers": {…}}`` file named by ``HARNESS_AUDIT_MCP_CONFIG`` (or
``--config``), connects to its first server with the official MCP client (stdio or streamable
HTTP), and calls the scenario's steps as ``tools/call`` in order. A step's tool is called by its
own name, or, when the server prefixes names, by the one tool whose name ends in
``__<tool>``. It prints one JSON line per step. Exit status: 0 once every step was attempted
and came to its ``expect.status`` (blocked or failing calls included: judging them is the
harness's job); 3 when a step's tool is unknown to the server or a step's ``expect.status``
(``success``/``error``/``blocked``, what the client can see) was not met, with one line on
stderr naming the steps; 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from pytest_harness_audit.doors.scenarios import Scenario, load_scenario
from pytest_harness_audit.errors import HarnessAuditError, UsageError

CONFIG_VARIABLE = "HARNESS_AUDIT_MCP_CONFIG"
TASK_VARIABLE = "HARNESS_AUDIT_TASK"
#: Exit status when a step's tool is unknown to the server or a step's expectation failed.
EXIT_STEP_FAILED = 3
_BLOCKED_PREFIX = "[blocked]"


def first_server(config_path: Path) -> tuple[str, Mapping[str, Any]]:
    """The name and entry of the first server of an ``mcpServers`` file."""
    try:
        document = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"{config_path}: cannot read the MCP config: {exc}") from None
    servers = document.get("mcpServers") if isinstance(document, dict) else None
    if not isinstance(servers, dict) or not servers:
        raise UsageError(f"{config_path}: field 'mcpServers' must name at least one server")
    name, entry = next(iter(servers.items()))
    if not isinstance(entry, dict):
        raise UsageError(f"{config_path}: server {name!r} must be an object")
    return name, entry


def resolve_tool(step_tool: str, available: Sequence[str]) -> str:
    """The server's name for a step's tool (exact, else the one ``…__<tool>``)."""
    if step_tool in available:
        return step_tool
    matches = [name for name in available if name.endswith(f"__{step_tool}")]
    return matches[0] if len(matches) == 1 else step_tool


async def _connect(stack: AsyncExitStack, entry: Mapping[str, Any]) -> Any:
    from mcp.client.session import ClientSession

    if "url" in entry:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(headers=dict(entry.get("headers") or {}), timeout=60.0)
        )
        streams = await stack.enter_async_context(
            streamable_http_client(str(entry["url"]), http_client=http)
        )
        read, write = streams[0], streams[1]
    else:
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=str(entry["command"]),
            args=[str(a) for a in entry.get("args", [])],
            env={**os.environ, **{str(k): str(v) for k, v in (entry.get("env") or {}).items()}},
        )
        read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def seen_status(line: Mapping[str, Any]) -> str:
    """The status a step's answer shows the client: ``blocked``, ``error`` or ``success``."""
    if not line.get("isError"):
        return "success"
    return "blocked" if str(line.get("text", "")).startswith(_BLOCKED_PREFIX) else "error"


async def play(
    scenario: Scenario, entry: Mapping[str, Any], problems: list[str] | None = None
) -> list[dict[str, Any]]:
    """Call every step of ``scenario`` on the server ``entry``; return one line per step.

    Steps whose tool the server does not list, or whose ``expect.status`` was not met, are
    described in ``problems`` (every step is still attempted).
    """
    lines = []
    found = problems if problems is not None else []
    async with AsyncExitStack() as stack:
        session = await _connect(stack, entry)
        available = [tool.name for tool in (await session.list_tools()).tools]
        for step in scenario.steps:
            name = resolve_tool(step.tool, available)
            line: dict[str, Any] = {"step": step.number, "tool": name}
            try:
                result = await session.call_tool(name, step.call_params())
            except Exception as exc:  # an MCP error answer: the agent notes it and goes on
                line.update(isError=True, text=str(exc))
            else:
                texts = [block.text for block in result.content if hasattr(block, "text")]
                line.update(isError=bool(result.is_error), text="\n".join(texts)[:500])
            lines.append(line)
            print(json.dumps(line), flush=True)
            if name not in available:
                found.append(f"step {step.number}: tool {step.tool!r} is unknown to the server")
            elif step.expect.status is not None and seen_status(line) != step.expect.status:
                found.append(
                    f"step {step.number}: {step.tool} expected status {step.expect.status}, "
                    f"got {seen_status(line)}"
                )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run the agent; see the module docstring."""
    parser = argparse.ArgumentParser(
        prog="python -m pytest_harness_audit.agents.scripted",
        description="play a scenario through MCP",
    )
    parser.add_argument("scenario", help="a shipped scenario name or a scenario file")
    parser.add_argument(
        "--config", type=Path, default=None, help=f"MCP config file (default: ${CONFIG_VARIABLE})"
    )
    args = parser.parse_args(argv)
    config = args.config or (
        Path(os.environ[CONFIG_VARIABLE]) if os.environ.get(CONFIG_VARIABLE) else None
    )
    try:
        if config is None:
            raise UsageError(f"no MCP config: set ${CONFIG_VARIABLE} or pass --config")
        scenario = load_scenario(args.scenario)
        _, entry = first_server(config)
        if os.environ.get(TASK_VARIABLE):
            print(json.dumps({"task": os.environ[TASK_VARIABLE]}), flush=True)
        problems: list[str] = []
        anyio.run(play, scenario, entry, problems)
    except HarnessAuditError as exc:
        print(f"scripted agent: error: {exc}", file=sys.stderr)
        return 2
    if problems:
        where = f"{scenario.source or scenario.name}"
        print(f"scripted agent: {where}: {'; '.join(problems)}", file=sys.stderr)
        return EXIT_STEP_FAILED
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
