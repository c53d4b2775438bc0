"""Aggregation, local tools, and the relayed (non-tool) MCP traffic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import git
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from proxy_support import git_upstream, memory_client, test_upstream, text_of
from stub_gate import StubGate

from pytest_harness_audit.doors.proxy import (
    BackgroundProxy,
    HttpUpstream,
    LocalTool,
    ProxyError,
    RecordingProxy,
    UpstreamStartError,
)

pytestmark = pytest.mark.anyio

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}


async def test_one_upstream_keeps_its_tool_names(
    make_proxy: Callable[..., RecordingProxy],
) -> None:
    async with make_proxy([test_upstream()]) as proxy, memory_client(proxy) as session:
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names == ["echo", "fail", "sleep", "write_later", "crash", "progress", "note"]


async def test_several_upstreams_are_prefixed_and_routed(
    git_repo: git.Repo, gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    upstreams = [git_upstream(git_repo), test_upstream()]
    async with make_proxy(upstreams) as proxy, memory_client(proxy) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"git__git_status", "git__git_commit", "test__echo", "test__sleep"} <= set(tools)
        assert not any(name in tools for name in ("git_status", "echo"))
        assert tools["test__echo"].input_schema["required"] == ["text"]

        echoed = await session.call_tool("test__echo", {"text": "routed"})
        assert text_of(echoed) == "routed"
        status = await session.call_tool("git__git_status", {"repo_path": git_repo.working_dir})
        assert "new.txt" in text_of(status)
        denied = await session.call_tool("git__git_commit", {"repo_path": git_repo.working_dir})
        assert denied.is_error and text_of(denied).startswith("[blocked] [web4-policy]")
    assert [(r["tool"], r["status"]) for r in gate.records()] == [
        ("mcp__test__echo", "success"),
        ("mcp__git__git_status", "success"),
        ("mcp__git__git_commit", "blocked"),
    ]


async def test_an_upstream_error_result_is_recorded_as_error_with_its_message(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    async with make_proxy([test_upstream()]) as proxy, memory_client(proxy) as session:
        result = await session.call_tool("fail", {"reason": "disk on fire"})
    message = "Error executing tool fail: disk on fire"  # the upstream SDK's wording
    assert result.is_error and text_of(result) == message
    [record] = gate.records()
    assert (record["status"], record["error_message"]) == ("error", message)
    assert record["output"]["isError"] is True


async def test_local_tools_are_listed_gated_and_recorded(
    tmp_path: Path, reports: list[str]
) -> None:
    # Local tools are judged under their exposed name, upstream tools as mcp__<server>__<tool>.
    gate = StubGate(tmp_path / "local", deny=["git_commit"])
    seen: list[dict[str, Any]] = []

    def shout(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return str(arguments["text"]).upper()

    async def stats(arguments: dict[str, Any]) -> dict[str, int]:
        return {"length": len(arguments["text"])}

    def broken(arguments: dict[str, Any]) -> str:
        raise ValueError("no such file: x")

    def self_gated(arguments: dict[str, Any]) -> str:
        return "recorded elsewhere"

    local = [
        LocalTool("Shout", "Upper-case the text.", SCHEMA, shout),
        LocalTool("Stats", "Count characters.", SCHEMA, stats),
        LocalTool("Broken", "Always fails.", SCHEMA, broken),
        LocalTool("SelfGated", "Records itself.", SCHEMA, self_gated, self_recording=True),
        LocalTool("git_commit", "Denied by the stand-in gate.", SCHEMA, shout),
    ]
    async with (
        RecordingProxy(gate, [test_upstream()], local_tools=local, report=reports.append) as proxy,
        memory_client(proxy) as session,
    ):
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names[:5] == ["Shout", "Stats", "Broken", "SelfGated", "git_commit"]
        assert "echo" in names
        assert text_of(await session.call_tool("Shout", {"text": "hi"})) == "HI"
        counted = await session.call_tool("Stats", {"text": "four"})
        assert counted.structured_content == {"length": 4}
        failed = await session.call_tool("Broken", {"text": ""})
        assert failed.is_error and text_of(failed) == "ValueError: no such file: x"
        assert text_of(await session.call_tool("SelfGated", {})) == "recorded elsewhere"
        denied = await session.call_tool("git_commit", {"text": "x"})
        assert denied.is_error
        assert text_of(await session.call_tool("echo", {"text": "up"})) == "up"
    assert seen == [{"text": "hi"}]  # the denied local tool never ran
    assert [(r["tool"], r["status"], r["error_message"]) for r in gate.records()] == [
        ("Shout", "success", None),
        ("Stats", "success", None),
        ("Broken", "error", "ValueError: no such file: x"),
        ("git_commit", "blocked", None),
        ("mcp__test__echo", "success", None),
    ]
    assert reports == []


async def test_a_local_tool_hides_an_upstream_tool_of_the_same_name(
    make_proxy: Callable[..., RecordingProxy], reports: list[str]
) -> None:
    local = LocalTool("echo", "Local echo.", SCHEMA, lambda arguments: "local")
    async with (
        make_proxy([test_upstream()], local_tools=[local]) as proxy,
        memory_client(proxy) as session,
    ):
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert names.count("echo") == 1
        assert text_of(await session.call_tool("echo", {"text": "x"})) == "local"
    assert reports == [
        "harness-audit proxy: tool 'echo' of upstream 'test' is hidden by the local tool "
        "of the same name"
    ]


def test_two_local_tools_with_one_name_are_refused(gate: StubGate) -> None:
    tool = LocalTool("Read", "Read.", SCHEMA, lambda arguments: "")
    with pytest.raises(ProxyError, match="two local tools are named 'Read'"):
        RecordingProxy(gate, [], local_tools=[tool, tool])
    proxy = RecordingProxy(gate, [], local_tools=[tool])
    with pytest.raises(ProxyError, match="two local tools are named 'Read'"):
        proxy.add_local_tool(tool)


async def test_resources_prompts_ping_and_progress_pass_through(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with make_proxy([test_upstream()]) as proxy, memory_client(proxy) as session:
        capabilities = session.server_capabilities
        assert capabilities is not None
        assert capabilities.resources is not None and capabilities.prompts is not None
        await session.send_ping()

        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["memo://greeting"]
        read = await session.read_resource("memo://greeting")
        assert isinstance(read.contents[0], types.TextResourceContents)
        assert read.contents[0].text == "hello from upstream"

        prompts = await session.list_prompts()
        assert [p.name for p in prompts.prompts] == ["review"]
        prompt = await session.get_prompt("review", {"topic": "the proxy"})
        content = prompt.messages[0].content
        assert isinstance(content, types.TextContent)
        assert content.text == "Please review the proxy."

        result = await session.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
        assert text_of(result) == "done 3"
        with anyio.fail_after(2):
            while len(progress) < 3:
                await anyio.sleep(0.01)
    assert progress == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    # Tool calls, resource reads and prompt gets are governed and recorded; listings and
    # pings are not.
    assert [r["tool"] for r in gate.records()] == [
        "mcp__test__resources/read",
        "mcp__test__prompts/get",
        "mcp__test__progress",
    ]


async def test_prompts_of_several_upstreams_are_prefixed(
    git_repo: git.Repo, make_proxy: Callable[..., RecordingProxy]
) -> None:
    upstreams = [git_upstream(git_repo), test_upstream()]
    async with make_proxy(upstreams) as proxy, memory_client(proxy) as session:
        prompts = await session.list_prompts()
        assert [p.name for p in prompts.prompts] == ["test__review"]
        prompt = await session.get_prompt("test__review", {"topic": "x"})
        assert prompt.messages
        resources = await session.list_resources()
        assert [str(r.uri) for r in resources.resources] == ["memo://greeting"]
        read = await session.read_resource("memo://greeting")
        assert read.contents


async def test_a_denied_read_or_prompt_is_an_mcp_error_and_never_relayed(
    tmp_path: Path, reports: list[str]
) -> None:
    gate = StubGate(tmp_path / "deny", deny=["mcp__test__resources/read", "mcp__test__prompts/get"])
    proxy = RecordingProxy(gate, [test_upstream()], report=reports.append)
    async with proxy, memory_client(proxy) as session:
        with pytest.raises(MCPError, match=r"^\[blocked\] \[web4-policy\] rule deny-mcp__test"):
            await session.read_resource("memo://greeting")
        with pytest.raises(MCPError, match=r"^\[blocked\]"):
            await session.get_prompt("review", {"topic": "x"})
        listed = await session.list_resources()  # listings are not calls: never refused
        assert [str(r.uri) for r in listed.resources] == ["memo://greeting"]
    assert [(r["tool"], r["status"], r["params"]) for r in gate.records()] == [
        (
            "mcp__test__resources/read",
            "blocked",
            {"uri": "memo://greeting", "url": "memo://greeting"},
        ),
        ("mcp__test__prompts/get", "blocked", {"name": "review", "arguments": {"topic": "x"}}),
    ]


async def test_a_read_of_an_unknown_owner_is_gated_on_each_upstream_tried(
    git_repo: git.Repo, tmp_path: Path, reports: list[str]
) -> None:
    gate = StubGate(tmp_path / "owners")
    upstreams = [git_upstream(git_repo), test_upstream()]
    proxy = RecordingProxy(gate, upstreams, report=reports.append)
    async with proxy, memory_client(proxy) as session:
        read = await session.read_resource("memo://greeting")  # not listed yet
        assert read.contents
        await session.list_resources()
        await session.read_resource("memo://greeting")  # now its owner is known
    assert [(r["tool"], r["status"]) for r in gate.records()] == [
        ("mcp__git__resources/read", "error"),
        ("mcp__test__resources/read", "success"),
        ("mcp__test__resources/read", "success"),
    ]


async def test_a_blocked_attempt_ends_a_read_of_an_unknown_owner(
    git_repo: git.Repo, tmp_path: Path, reports: list[str]
) -> None:
    gate = StubGate(tmp_path / "first", deny=["mcp__git__resources/read"])
    upstreams = [git_upstream(git_repo), test_upstream()]
    proxy = RecordingProxy(gate, upstreams, report=reports.append)
    async with proxy, memory_client(proxy) as session:
        with pytest.raises(MCPError, match=r"^\[blocked\]"):
            await session.read_resource("memo://greeting")
    assert [(r["tool"], r["status"]) for r in gate.records()] == [
        ("mcp__git__resources/read", "blocked")
    ]


async def test_upstream_log_messages_reach_the_client(
    make_proxy: Callable[..., RecordingProxy],
) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async with (
        make_proxy([test_upstream()]) as proxy,
        memory_client(proxy, logging_callback=on_log) as session,
    ):
        assert text_of(await session.call_tool("note", {"message": "half way"})) == "noted"
        with anyio.fail_after(2):
            while not logged:
                await anyio.sleep(0.01)
    assert [(p.level, p.data) for p in logged] == [("info", "half way")]


async def test_a_streamable_http_upstream(
    tmp_path: Path, gate: StubGate, reports: list[str]
) -> None:
    front_gate = StubGate(tmp_path / "front")
    with BackgroundProxy(front_gate, [test_upstream()], report=reports.append) as front:
        remote = HttpUpstream(name="remote", url=front.url, headers=front.endpoint.headers)
        async with (
            RecordingProxy(gate, [remote], report=reports.append) as proxy,
            memory_client(proxy) as session,
        ):
            assert "echo" in [tool.name for tool in (await session.list_tools()).tools]
            assert text_of(await session.call_tool("echo", {"text": "far"})) == "far"
    # Each proxy names the tool after its own upstream: the outer one's is 'remote'.
    assert [(r["tool"], r["status"]) for r in gate.records()] == [("mcp__remote__echo", "success")]
    assert [(r["tool"], r["status"]) for r in front_gate.records()] == [
        ("mcp__test__echo", "success")
    ]
    assert reports == []


async def test_an_http_upstream_without_the_token_is_a_start_error(
    gate: StubGate, make_proxy: Callable[..., RecordingProxy]
) -> None:
    with BackgroundProxy(gate, [test_upstream()], report=lambda line: None) as front:
        remote = HttpUpstream(name="remote", url=front.url)
        with pytest.raises(UpstreamStartError, match="upstream 'remote' could not be started"):
            async with make_proxy([remote]):
                pass
