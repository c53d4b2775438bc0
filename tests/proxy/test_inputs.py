"""Inputs the user controls: the mcpServers file, --http, the command line, wire lines."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest
from proxy_support import STUB_PROXY
from stub_gate import StubGate

from pytest_harness_audit.cli import main, proxy_cmd
from pytest_harness_audit.doors.proxy import (
    HttpUpstream,
    ProxyError,
    StdioUpstream,
    http_server_entry,
    load_upstreams_config,
    mcp_config,
    parse_http_address,
    parse_ready_line,
    proxy_command,
    stdio_server_entry,
    upstream_from_argv,
)
from pytest_harness_audit.doors.proxy.http import HttpEndpoint
from pytest_harness_audit.doors.proxy.stdio import parse_line


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_config_file_in_the_standard_shape(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "mcpServers": {
                "git": {"command": "uvx", "args": ["mcp-server-git"], "env": {"A": "1"}},
                "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "y"}},
                "off": {"command": "nothing", "disabled": True},
            }
        },
    )
    assert load_upstreams_config(path) == [
        StdioUpstream(name="git", command="uvx", args=("mcp-server-git",), env={"A": "1"}),
        HttpUpstream(name="docs", url="http://127.0.0.1:9/mcp", headers={"X": "y"}),
    ]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"servers": {}}, "expected an object with an 'mcpServers' object"),
        ({"mcpServers": {}}, "'mcpServers' lists no enabled server"),
        ({"mcpServers": {"a": {}}}, "mcpServers.a: missing field 'command' (or 'url')"),
        ({"mcpServers": {"a": []}}, "mcpServers.a: expected an object with 'command' or 'url'"),
        (
            {"mcpServers": {"a": {"command": "x", "url": "http://h"}}},
            "mcpServers.a: give either 'command' or 'url', not both",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "args": "--flag"}}},
            "mcpServers.a: field 'args' must be a list of strings",
        ),
        (
            {"mcpServers": {"a": {"command": "x", "env": {"A": 1}}}},
            "mcpServers.a: field 'env' must be an object of strings",
        ),
        (
            {"mcpServers": {"a": {"url": "ftp://h"}}},
            "mcpServers.a: field 'url' value 'ftp://h' is not an http(s) URL",
        ),
        (
            {"mcpServers": {"a": {"type": "sse", "url": "http://h"}}},
            "mcpServers.a: field 'type' value 'sse' is not supported",
        ),
        (
            {"mcpServers": {"a__b": {"command": "x"}}},
            "mcpServers.a__b: server name 'a__b' must be",
        ),
    ],
)
def test_config_file_errors_name_the_file_and_field(
    tmp_path: Path, document: object, message: str
) -> None:
    path = _write(tmp_path, document)
    with pytest.raises(ProxyError) as raised:
        load_upstreams_config(path)
    assert str(raised.value).startswith(f"{path}: ")
    assert message in str(raised.value)


def test_config_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{\n  "mcpServers": {,}\n}\n', encoding="utf-8")
    with pytest.raises(ProxyError, match=r"mcp\.json:2: invalid JSON"):
        load_upstreams_config(path)
    with pytest.raises(ProxyError, match="cannot read the MCP config"):
        load_upstreams_config(tmp_path / "absent.json")


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["python3", "-m", "mcp_server_git", "--repository", "."], "git"),
        (["uvx", "mcp-server-git"], "git"),
        (["npx", "-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "filesystem"),
        (["npx", "-y", "@acme/mcp-server"], "mcp-server"),  # nothing after the prefix: kept
        (["uvx", "weather-server-api"], "weather-server-api"),  # only a leading prefix goes
        (["/usr/local/bin/my server"], "my-server"),
    ],
)
def test_upstream_name_from_the_command_line(argv: list[str], name: str) -> None:
    upstream = upstream_from_argv(argv)
    assert (upstream.name, upstream.argv) == (name, argv)


def test_http_address_accepts_only_loopback() -> None:
    assert parse_http_address("127.0.0.1:8080") == ("127.0.0.1", 8080)
    assert parse_http_address("localhost:0") == ("127.0.0.1", 0)
    assert parse_http_address("[::1]:9") == ("::1", 9)
    with pytest.raises(ProxyError, match="only binds to loopback"):
        parse_http_address("0.0.0.0:8080")
    with pytest.raises(ProxyError, match="port '80a' is not a number"):
        parse_http_address("127.0.0.1:80a")
    with pytest.raises(ProxyError, match=r"must look like 127\.0\.0\.1:PORT"):
        parse_http_address("8080")


def test_ready_line_round_trips() -> None:
    endpoint = HttpEndpoint(url="http://127.0.0.1:4242/mcp", token="abc_-123")
    assert parse_ready_line(endpoint.ready_line() + " session=s") == endpoint
    assert parse_ready_line("harness-audit proxy: serving stdio session=s") is None


def test_mcp_config_entries_round_trip_through_the_config_loader(tmp_path: Path) -> None:
    endpoint = HttpEndpoint(url="http://127.0.0.1:4242/mcp", token="t0k")
    http = mcp_config(http_server_entry(endpoint), name="web")
    assert http == {
        "mcpServers": {
            "web": {
                "type": "http",
                "url": "http://127.0.0.1:4242/mcp",
                "headers": {"Authorization": "Bearer t0k"},
            }
        }
    }
    stdio = mcp_config(stdio_server_entry(["py", "-m", "x"], env={"A": "1"}))
    assert load_upstreams_config(_write(tmp_path, stdio)) == [
        StdioUpstream(name="harness-audit", command="py", args=("-m", "x"), env={"A": "1"})
    ]
    assert load_upstreams_config(_write(tmp_path, http)) == [
        HttpUpstream(name="web", url=endpoint.url, headers=endpoint.headers)
    ]


def test_proxy_command_builds_the_cli_argv(tmp_path: Path) -> None:
    argv = proxy_command(
        storage=tmp_path, session="s1", preset="safety", http="127.0.0.1:0",
        call_timeout=2.5, upstream=["uvx", "mcp-server-git"], python="py",
    )  # fmt: skip
    assert argv == [
        "py", "-m", "pytest_harness_audit", "--storage", str(tmp_path), "proxy",
        "--session", "s1", "--preset", "safety", "--http", "127.0.0.1:0",
        "--call-timeout", "2.5", "--", "uvx", "mcp-server-git",
    ]  # fmt: skip
    with pytest.raises(ValueError, match="either policy or preset"):
        proxy_command(storage=tmp_path, policy="p.yaml", preset="safety")


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"{not json", types.PARSE_ERROR, None),
        (b'{"jsonrpc": "2.0", "id": 3, "method": 7}', types.INVALID_REQUEST, 3),
        (b'{"jsonrpc": "1.0", "id": "a", "method": "ping"}', types.INVALID_REQUEST, "a"),
        (b'{"jsonrpc": "2.0", "id": true, "method": 7}', types.INVALID_REQUEST, None),
        (b"[]", types.INVALID_REQUEST, None),
        (b'"just a string"', types.INVALID_REQUEST, None),
    ],
)
def test_bad_wire_lines_become_json_rpc_errors(line: bytes, code: int, request_id: object) -> None:
    parsed = parse_line(line)
    assert isinstance(parsed, types.JSONRPCError)
    assert (parsed.error.code, parsed.id) == (code, request_id)


def test_good_and_blank_wire_lines() -> None:
    assert parse_line(b"  \n") is None
    parsed = parse_line(b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}\n')
    assert parsed is not None and not isinstance(parsed, types.JSONRPCError)
    assert isinstance(parsed.message, types.JSONRPCRequest)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([], "give an upstream command after '--', --config FILE, --workspace or --social"),
        (["--http", "0.0.0.0:1", "--", "x"], "only binds to loopback"),
        (["--call-timeout", "0", "--", "x"], "--call-timeout value 0.0 must be a positive"),
        (["--config", "absent.json"], "absent.json: cannot read the MCP config"),
        (["--", "harness-audit-no-such-command-xyz"], "could not be started: command not found"),
        (["--workspace", "no-such-dir"], "--workspace no-such-dir: not a directory"),
    ],
)
def test_cli_usage_errors_are_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    arguments: list[str],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(proxy_cmd, "_open_gate", lambda *args, **_: StubGate(tmp_path))
    monkeypatch.setattr(proxy_cmd, "_close_chain", lambda *args: True)  # the stub has no chain
    code = main(["--storage", str(tmp_path), "proxy", *arguments])
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("harness-audit: error: ")
    assert message in lines[0]


@pytest.mark.slow
def test_cli_usage_error_from_a_real_process(tmp_path: Path) -> None:
    argv = [sys.executable, STUB_PROXY, "--storage", str(tmp_path), "proxy", "--http", "1.2.3.4:5"]
    done = subprocess.run([*argv, "--", "x"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "harness-audit: error: --http value '1.2.3.4:5': the proxy only binds to loopback "
        "(127.0.0.1)"
    ]


# -- bad upstreams, as a user meets them: one line, never a traceback --------------------------


def _proxy_process(tmp_path: Path, *options: str, upstream: list[str]) -> tuple[int, list[str]]:
    argv = proxy_command(storage=tmp_path / "storage", preset="permissive", upstream=upstream)
    at = argv.index("--")
    done = subprocess.run(
        [*argv[:at], *options, *argv[at:]],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    return done.returncode, done.stderr.strip().splitlines()


@pytest.mark.parametrize("options", [(), ("--http", "127.0.0.1:0")], ids=["stdio", "http"])
@pytest.mark.slow
def test_an_upstream_that_exits_at_once_is_one_line_naming_it(
    tmp_path: Path, options: tuple[str, ...]
) -> None:
    code, lines = _proxy_process(
        tmp_path, *options, upstream=[sys.executable, "-c", "raise SystemExit(3)"]
    )
    assert code == 2
    assert lines == [
        "harness-audit: error: upstream 'raise-SystemExit-3' could not be started: it exited "
        "before completing the MCP handshake"
    ]


@pytest.mark.slow
def test_an_upstream_that_writes_garbage_and_exits_gives_no_traceback(tmp_path: Path) -> None:
    code, lines = _proxy_process(
        tmp_path, upstream=[sys.executable, "-c", "print('Welcome to my server!')"]
    )
    assert code == 2
    assert not any("Traceback" in line for line in lines), lines
    # what was wrong with its output, then the error naming it
    assert lines == [
        "harness-audit proxy: Failed to parse JSONRPC message from server (Invalid JSON: "
        "expected value at line 1 column 1: 'Welcome to my server!')",
        "harness-audit: error: upstream 'print-Welcome-to-my-server' could not be started: it "
        "exited before completing the MCP handshake",
    ]
