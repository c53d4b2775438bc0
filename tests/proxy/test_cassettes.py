"""Cassettes: record a proxy session's upstream exchanges, replay them without the upstream."""

from __future__ import annotations

import base64
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from pytest_harness_audit.doors.proxy.cassette import CassetteError, Interaction, load_cassette
from pytest_harness_audit.doors.proxy.config import StdioUpstream
from pytest_harness_audit.doors.proxy.errors import ProxyError
from pytest_harness_audit.doors.proxy.replay import CassetteTape, choose_mode
from pytest_harness_audit.inspect.nested_strings import map_strings
from pytest_harness_audit.policy import Policy
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.social.secret_ledger import SecretLedger

CASSETTES = Path(__file__).parent / "cassettes"
GIT_CASSETTE = CASSETTES / "git_session.yaml"

pytest_plugins = ["pytester"]

NO_COMMITS = {
    "preset": "safety",
    "rules": [
        {
            "id": "no-commits",
            "name": "No commits by agents",
            "priority": 0,
            "decision": "deny",
            "reason": "agents may not commit",
            "match": {"tools": ["mcp__git__git_commit"]},
        }
    ],
}


def git_server(harness: Harness) -> list[str]:
    return [sys.executable, "-m", "mcp_server_git", "--repository", str(harness.root)]


def tripwire(marker: Path) -> list[str]:
    """An upstream argv that leaves ``marker`` behind if it is ever started."""
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').close()"]


async def session_calls(
    url: str, headers: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[str], list[types.CallToolResult]]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return sorted(tool.name for tool in listed.tools), results


def servers(**argvs: list[str]) -> dict[str, Any]:
    """An ``mcpServers`` document naming each upstream."""
    return {
        "mcpServers": {name: {"command": argv[0], "args": argv[1:]} for name, argv in argvs.items()}
    }


def scripted_session(harness: Harness) -> list[tuple[str, dict[str, Any]]]:
    path = str(harness.root)
    return [
        ("git_status", {"repo_path": path}),
        ("git_log", {"repo_path": path, "max_count": 1}),
        ("git_show", {"repo_path": path, "revision": "no-such-revision"}),
        ("git_commit", {"repo_path": path, "message": "sneaky"}),
    ]


def texts(results: list[types.CallToolResult], root: Path) -> list[tuple[bool, str]]:
    out = []
    for result in results:
        text = " ".join(getattr(item, "text", "") for item in result.content)
        out.append((result.is_error, text.replace(str(root), "{workspace}")))
    return out


def chain_view(harness: Harness) -> list[tuple[Any, ...]]:
    return [(c.tool, c.category, c.status, c.decision, c.door) for c in harness.calls()]


# what differs between two sessions of the same calls: ids, times, links, the workspace path
VOLATILE = {
    "recordId",
    "r6RequestId",
    "timestamp",
    "clock",
    "durationMs",
    "sessionId",
    "lct",
    "prevRecordHash",
    "inputHash",
    "prevR6Id",
}


def comparable(value: Any, root: Path) -> Any:
    if isinstance(value, dict):
        return {k: comparable(v, root) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [comparable(v, root) for v in value]
    if isinstance(value, str):
        return value.replace(str(root), "{workspace}")
    return value


def chain_records(harness: Harness) -> list[Any]:
    return [comparable(record.raw, harness.root) for record in harness.records]


@pytest.fixture
def git_harness(harness_factory: Any) -> Any:
    def make() -> Harness:
        harness: Harness = harness_factory(
            "python-service", policy=Policy.from_dict(NO_COMMITS, name="no-commits")
        )
        return harness

    return make


@pytest.mark.slow
def test_recorded_git_session_replays_without_the_upstream(
    git_harness: Any, tmp_path: Path
) -> None:
    cassette = tmp_path / "cassettes" / "git.yaml"
    first = git_harness()
    proxy = first.start_proxy(git_server(first), workspace_tools=False, record=cassette)
    listed, recorded = anyio.run(session_calls, proxy.url, proxy.headers, scripted_session(first))
    first.close()
    text = cassette.read_text(encoding="utf-8")
    assert str(first.root) not in text and "{workspace}" in text
    document = yaml.safe_load(text)
    assert [u["name"] for u in document["upstreams"]] == ["git"]
    assert document["upstreams"][0]["server_info"]["name"] == "mcp-git"
    # the denied commit never reached the upstream, so it is not on the cassette
    assert [i["tool"] for i in document["interactions"]] == ["git_status", "git_log", "git_show"]

    second = git_harness()
    marker = tmp_path / "upstream-started"
    proxy = second.start_proxy(tripwire(marker), workspace_tools=False, replay=cassette)
    relisted, replayed = anyio.run(
        session_calls, proxy.url, proxy.headers, scripted_session(second)
    )
    second.close()
    assert not marker.exists()
    assert relisted == listed and "git_status" in listed
    assert texts(replayed, second.root) == texts(recorded, first.root)
    assert chain_view(second) == chain_view(first)
    assert chain_records(second) == chain_records(first)
    assert any("outputHash" in r["result"] for r in chain_records(first))
    assert second.verdict == first.verdict == "FAIL"
    assert second.verify().valid


def test_committed_cassette_replays_with_no_upstream_installed(
    git_harness: Any, tmp_path: Path
) -> None:
    harness = git_harness()
    proxy = harness.start_proxy(workspace_tools=False, replay=GIT_CASSETTE)
    path = str(harness.root)
    _, (status, log) = anyio.run(
        session_calls,
        proxy.url,
        proxy.headers,
        [("git_status", {"repo_path": path}), ("git_log", {"repo_path": path, "max_count": 1})],
    )
    assert not status.is_error and "On branch" in status.content[0].text  # type: ignore[union-attr]
    assert not log.is_error
    assert [(c.tool, c.status) for c in harness.calls()] == [
        ("mcp__git__git_status", "success"),
        ("mcp__git__git_log", "success"),
    ]


def test_an_unmatched_call_is_an_error_naming_it(
    git_harness: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    harness = git_harness()
    proxy = harness.start_proxy(workspace_tools=False, replay=GIT_CASSETTE)
    _, (result,) = anyio.run(
        session_calls,
        proxy.url,
        proxy.headers,
        [("git_log", {"repo_path": str(harness.root), "max_count": 99})],
    )
    assert result.is_error
    message = result.content[0].text  # type: ignore[union-attr]
    assert "no recorded call matches tools/call 'git_log'" in message
    assert "'max_count': 99" in message and "{workspace}" in message
    (call,) = harness.calls()
    assert (call.tool, call.status) == ("mcp__git__git_log", "error")
    lines = [line for line in capsys.readouterr().err.splitlines() if "no recorded call" in line]
    assert len(lines) == 1 and str(GIT_CASSETTE) in lines[0]


def test_match_on_tool_only_ignores_the_arguments(git_harness: Any) -> None:
    harness = git_harness()
    proxy = harness.start_proxy(workspace_tools=False, replay=GIT_CASSETTE, match_on=("tool",))
    _, (result,) = anyio.run(
        session_calls, proxy.url, proxy.headers, [("git_log", {"repo_path": "/elsewhere"})]
    )
    assert not result.is_error


def test_a_callable_matcher_decides(tmp_path: Path) -> None:
    def same_tool_any_args(recorded: Interaction, call: Interaction) -> bool:
        return recorded.tool == call.tool

    tape = CassetteTape(GIT_CASSETTE, "replay", match_on=same_tool_any_args)
    found = tape.answer(Interaction("git", "git_status", {"repo_path": "x"}))
    assert found is not None and found.tool == "git_status"
    assert tape.answer(Interaction("git", "git_diff", {})) is None
    strict = CassetteTape(GIT_CASSETTE, "replay")
    assert strict.answer(Interaction("git", "git_status", {"repo_path": "x"})) is None


def test_bad_match_on_names_the_field() -> None:
    with pytest.raises(ProxyError, match=r"match_on .*'body'"):
        CassetteTape(GIT_CASSETTE, "replay", match_on=("tool", "body"))


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("version: 1\nupstreams: [\n", "not valid YAML at line"),
        ("- just\n- a list\n", "expected a mapping"),
        ("version: 7\n", "version must be 1"),
        ("version: 1\nupstreams: [{name: git}]\ninteractions: [{upstream: git}]\n", "tool"),
        (
            "version: 1\nupstreams: [{name: git}]\n"
            "interactions: [{upstream: other, tool: t, result: {}}]\n",
            "'other' is not among 'upstreams'",
        ),
        (
            "version: 1\nupstreams: [{name: git}]\ninteractions: [{upstream: git, tool: t}]\n",
            "needs a 'result' or an 'error'",
        ),
    ],
)
def test_a_malformed_cassette_is_one_line_and_loses_no_record(
    git_harness: Any, tmp_path: Path, content: str, problem: str
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(content, encoding="utf-8")
    harness = git_harness()
    harness.call("Read", file_path="README.md")
    with pytest.raises(CassetteError) as caught:
        harness.start_proxy(workspace_tools=False, replay=bad)
    message = str(caught.value)
    assert "\n" not in message and str(bad) in message and problem in message
    assert [c.tool for c in harness.calls()] == ["Read"]
    assert harness.verify().valid


def test_a_missing_replay_cassette_is_named(git_harness: Any, tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match=r"missing\.yaml: not found"):
        git_harness().start_proxy(workspace_tools=False, replay=tmp_path / "missing.yaml")


def test_record_modes_follow_pytest_recording(tmp_path: Path) -> None:
    missing, present = tmp_path / "missing.yaml", tmp_path / "present.yaml"
    present.write_text("version: 1\n", encoding="utf-8")
    with pytest.raises(CassetteError, match="--harness-audit-record=new"):
        choose_mode(record=None, replay=None, cassette=missing, record_mode="none")
    assert choose_mode(record=None, replay=None, cassette=present, record_mode="none") == (
        present,
        "replay",
    )
    assert choose_mode(record=None, replay=None, cassette=missing, record_mode="new") == (
        missing,
        "record",
    )
    # an existing cassette is replayed, and what it lacks appended
    assert choose_mode(record=None, replay=None, cassette=present, record_mode="new") == (
        present,
        "new",
    )
    assert choose_mode(record=None, replay=None, cassette=present, record_mode="all") == (
        present,
        "record",
    )
    # explicit record= / replay= are not changed by the mode
    assert choose_mode(record=present, replay=None, cassette=None, record_mode="none") == (
        present,
        "record",
    )
    assert choose_mode(record=None, replay=present, cassette=None, record_mode="all") == (
        present,
        "replay",
    )
    assert choose_mode(record=None, replay=None, cassette=None) is None
    with pytest.raises(CassetteError, match="only one of"):
        choose_mode(record=present, replay=present, cassette=None)
    with pytest.raises(CassetteError, match="'sometimes'"):
        choose_mode(record=None, replay=None, cassette=present, record_mode="sometimes")


def test_written_cassettes_hold_no_noted_secret(tmp_path: Path) -> None:
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    ledger = SecretLedger()
    ledger.add(secret)
    workspace = tmp_path / "ws"
    tape = CassetteTape(tmp_path / "out.yaml", "record", workspace=workspace, redact=ledger.redact)
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=f"API_KEY={secret} in {workspace}/.env")]
    )
    upstream: Any = type("U", (), {"name": "git"})()
    tape.called(upstream, "read", {"path": f"{workspace}/.env", "token": secret}, result)
    tape.save()
    text = (tmp_path / "out.yaml").read_text(encoding="utf-8")
    assert secret not in text and str(workspace) not in text
    assert text.count("[secret:") == 2
    loaded = load_cassette(tmp_path / "out.yaml")
    assert loaded.interactions[0].arguments["path"] == "{workspace}/.env"


def test_a_secret_or_the_workspace_as_a_key_is_written_redacted(tmp_path: Path) -> None:
    secret = "sk-live-4f9a8b7c6d5e4f3a2b1c"
    ledger = SecretLedger()
    ledger.add(secret)
    workspace = tmp_path / "ws"

    def redact(value: object) -> object:  # as a session's: string by string, keys included
        return map_strings(value, lambda text: str(ledger.redact(text)))

    tape = CassetteTape(tmp_path / "out.yaml", "record", workspace=workspace, redact=redact)
    result = types.CallToolResult(content=[types.TextContent(type="text", text="ok")])
    upstream: Any = type("U", (), {"name": "git"})()
    arguments = {"sizes": {f"{workspace}/a.txt": 3, secret: ("x", secret)}}
    tape.called(upstream, "stat", arguments, result)
    tape.save()
    text = (tmp_path / "out.yaml").read_text(encoding="utf-8")
    assert secret not in text and str(workspace) not in text
    marker = str(ledger.redact(secret))
    assert marker.startswith("[secret:")
    sizes = load_cassette(tmp_path / "out.yaml").interactions[0].arguments["sizes"]
    assert sizes == {"{workspace}/a.txt": 3, marker: ["x", marker]}


def test_replaying_a_copied_cassette_leaves_it_unchanged(git_harness: Any, tmp_path: Path) -> None:
    copy = tmp_path / "copy.yaml"
    shutil.copy(GIT_CASSETTE, copy)
    harness = git_harness()
    harness.start_proxy(workspace_tools=False, replay=copy)
    harness.close()
    assert copy.read_bytes() == GIT_CASSETTE.read_bytes()


def test_an_upstream_mcp_error_replays_as_the_same_error(tmp_path: Path) -> None:
    tape = CassetteTape(tmp_path / "errors.yaml", "record")
    upstream: Any = type("U", (), {"name": "srv"})()
    failure = MCPError(types.INVALID_PARAMS, "unknown tool: nope")
    tape.called(upstream, "nope", {"a": 1}, failure)
    tape.save()
    replaying = CassetteTape(tmp_path / "errors.yaml", "replay")
    stand_in = replaying.replay_upstream(StdioUpstream(name="srv", command="never-started"))
    with pytest.raises(MCPError) as caught:
        anyio.run(lambda: stand_in.call_tool("nope", {"a": 1}))
    assert (caught.value.error.code, caught.value.error.message) == (
        types.INVALID_PARAMS,
        "unknown tool: nope",
    )
    with pytest.raises(CassetteError, match="no upstream named 'other'"):
        replaying.replay_upstream(StdioUpstream(name="other", command="never-started"))


RECORD_MODE_SUITE = """
import json, os, sys

import anyio
import httpx2
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def echo(proxy):
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=30) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return await session.call_tool("echo", {"text": "hello"})


def test_echo(harness, recording_proxy):
    upstream = json.loads(os.environ["CASSETTE_UPSTREAM"])
    proxy = recording_proxy(upstream, workspace_tools=False, cassette="cassettes/echo.yaml")
    result = anyio.run(echo, proxy)
    assert result.content[0].text == "hello"
    assert [c.status for c in harness.calls()] == ["success"]
"""


@pytest.mark.slow
def test_record_option_none_new_all_through_the_fixture(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from proxy_support import TEST_SERVER

    pytester.makepyfile(test_echo=RECORD_MODE_SUITE)
    cassette = pytester.path / "cassettes" / "echo.yaml"
    real = servers(echo=[sys.executable, TEST_SERVER])
    marker = tmp_path / "started"
    monkeypatch.setenv("CASSETTE_UPSTREAM", json.dumps(real))

    missing = pytester.runpytest("-p", "no:cacheprovider")
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(["*echo.yaml: not found*--harness-audit-record=new*"])

    pytester.runpytest("-p", "no:cacheprovider", "--harness-audit-record=new").assert_outcomes(
        passed=1
    )
    recorded = cassette.read_bytes()
    assert b"hello" in recorded

    # the same upstream name, a command that leaves a mark if it is ever started
    monkeypatch.setenv("CASSETTE_UPSTREAM", json.dumps(servers(echo=tripwire(marker))))
    for mode in ("none", "new"):  # an existing cassette is replayed
        run = pytester.runpytest("-p", "no:cacheprovider", f"--harness-audit-record={mode}")
        run.assert_outcomes(passed=1)
    assert not marker.exists() and cassette.read_bytes() == recorded

    # `all` records again: the tripwire upstream starts (and fails the handshake)
    pytester.runpytest("-p", "no:cacheprovider", "--harness-audit-record=all").assert_outcomes(
        failed=1
    )
    assert marker.exists()


def test_the_workspace_secrets_never_reach_a_cassette(git_harness: Any, tmp_path: Path) -> None:
    from proxy_support import TEST_SERVER

    harness = git_harness()
    env = (harness.root / ".env").read_text(encoding="utf-8")
    key = next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("API_KEY="))
    cassette = tmp_path / "secrets.yaml"
    proxy = harness.start_proxy(
        [sys.executable, TEST_SERVER], workspace_tools=False, record=cassette
    )
    assert proxy.tape is not None
    upstream: Any = type("U", (), {"name": "echo"})()
    encoded = base64.b64encode(key.encode()).decode()
    leaked = types.CallToolResult(
        content=[types.TextContent(type="text", text=f"key={key}\nencoded={encoded}")]
    )
    proxy.tape.called(upstream, "echo", {"text": key}, leaked)
    harness.close()
    text = cassette.read_text(encoding="utf-8")
    assert key not in text and encoded not in text
    assert text.count("[secret:") == 3
    # a replayed call carrying the secret matches its redacted recording
    replaying = CassetteTape(cassette, "replay", redact=proxy.tape.redact)
    assert replaying.answer(Interaction("echo", "echo", {"text": key})) is not None
