"""The audit chain never holds a known secret in clear, whatever field carries it.

Records are read by reviewers and kept as snapshots, so every string of a record — the tool
name, an address, a refusal's ``social`` fields, an error that echoes the input, the parts of
a value split over several messages — passes the same redaction as the parameters. Each test
drives a real door and reads the raw bytes of the chain file: the secret is absent, its
``[secret:<fingerprint>]`` marker is there. Look-alikes that are not the secret stay as they
are.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from secret_support import api_key, call_tools, service_harness, workspace_api_key

from pytest_harness_audit.audit.records import RecordDraft
from pytest_harness_audit.gate.record_scrub import KeptSecrets, RecordScrub, fragment_core
from pytest_harness_audit.inspect.nested_strings import MAX_DEPTH, WITHHELD
from pytest_harness_audit.inspect.secrets import fingerprint
from pytest_harness_audit.session.harness import Harness
from pytest_harness_audit.session.workspace import create_workspace
from pytest_harness_audit.social.secret_ledger import SecretLedger

PROXY_TESTS = Path(__file__).resolve().parents[1] / "proxy"
LIBRARY = str(PROXY_TESTS / "library_server.py")
UPSTREAM = str(PROXY_TESTS / "upstream_server.py")


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    yield from service_harness(tmp_path, agents=("alice", "bob", "carol"))


def _chain_bytes(harness: Harness) -> bytes:
    return harness.chain.path.read_bytes()


def _assert_redacted(harness: Harness, *values: str) -> bytes:
    """No value (nor any 8-character run of it past its vendor prefix) is in the chain; the
    marker of the API key is."""
    data = _chain_bytes(harness)
    for value in values:
        assert value.encode() not in data
    key = api_key(harness)
    body = key.removeprefix("sk-test-")
    for start in range(len(body) - 7):
        assert body[start : start + 8].encode() not in data, body[start : start + 8]
    assert f"[secret:{fingerprint(key)}]".encode() in data
    return data


def _send(harness: Harness, to: str, text: str) -> str:
    try:
        harness.send(to, text)
    except Exception as error:  # refused: the record is what matters here
        return type(error).__name__
    return "sent"


# -- the social door ---------------------------------------------------------------------------


@pytest.mark.parametrize("to", ["agent:{key}", "group:bob,{key}", "agent:x{key}y"])
def test_a_secret_in_the_address_is_redacted(harness: Harness, to: str) -> None:
    key = api_key(harness)
    assert _send(harness, to.format(key=key), "hello") != "sent"
    data = _assert_redacted(harness)
    (record,) = [json.loads(line) for line in data.splitlines()]
    assert f"[secret:{fingerprint(key)}]" in record["social"]["to"]


def test_a_secret_in_a_refused_message_is_redacted_in_every_field(harness: Harness) -> None:
    key = api_key(harness)
    assert _send(harness, "agent:bob", f"the key is {key}") == "FirewallSendError"
    _assert_redacted(harness)


def test_a_value_split_over_two_messages_leaves_neither_part_in_clear(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2
    assert _send(harness, "agent:bob", f"part one {key[:half]}") == "sent"
    assert _send(harness, "agent:bob", f"the rest is {key[half:]}") == "FirewallSendError"
    _assert_redacted(harness, key[:half], key[half:])
    assert harness.verdict == "FAIL"


def test_a_value_split_inside_one_message_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    half = len(key) // 2
    text = f"first {key[:half]} and then {key[half:]} done"
    assert _send(harness, "agent:bob", text) == "FirewallSendError"
    _assert_redacted(harness, key[:half], key[half:])


def test_a_long_message_with_the_value_across_its_middle_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    text = "a" * 15_000 + key + "b" * 15_000
    assert _send(harness, "agent:bob", text) == "FirewallSendError"
    _assert_redacted(harness)


# -- the MCP proxy -----------------------------------------------------------------------------


def _proxy_calls(harness: Harness, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    upstreams = {
        "mcpServers": {
            "lib": {"command": sys.executable, "args": [LIBRARY]},
            "up": {"command": sys.executable, "args": [UPSTREAM]},
        }
    }
    return call_tools(harness, upstreams, calls)


def test_an_unknown_tool_named_by_a_secret_is_redacted_with_two_upstreams(
    harness: Harness,
) -> None:
    key = api_key(harness)
    (answer,) = _proxy_calls(harness, [(key, {})])
    assert answer.startswith("refused: ")
    data = _assert_redacted(harness)
    records = [json.loads(line) for line in data.splitlines()]
    assert [r["tool"] for r in records] == [f"[secret:{fingerprint(key)}]"]
    assert records[0]["request"]["toolName"] == records[0]["tool"]


@pytest.mark.slow
def test_an_unknown_tool_with_a_secret_inside_its_name_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    (answer,) = _proxy_calls(harness, [(f"lib__{key}", {})])
    assert answer.startswith(("refused: ", "error: "))
    _assert_redacted(harness)


def _cli_proxy_call(storage: Path, workspace: Path, name: str) -> str:
    command = ["-m", "pytest_harness_audit", "--storage", str(storage), "proxy"]
    command += ["--workspace", str(workspace), "--session", "cli", "--preset", "safety"]
    server = StdioServerParameters(command=sys.executable, args=command)

    async def session() -> str:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            try:
                await client.call_tool(name, {})
            except MCPError as error:
                return error.error.message
            return "answered"

    return anyio.run(session)


@pytest.mark.slow
def test_the_command_line_proxy_redacts_an_unknown_tool_name(tmp_path: Path) -> None:
    workspace = Path(create_workspace(tmp_path / "ws", "python-service").working_dir)
    key = workspace_api_key(workspace)
    _cli_proxy_call(tmp_path / "store", workspace, f"run_{key}")
    data = (tmp_path / "store" / "audit" / "cli.jsonl").read_bytes()
    assert key.encode() not in data
    assert f"[secret:{fingerprint(key)}]".encode() in data


# -- the record builder, for every door ----------------------------------------------------------


def test_effects_naming_a_file_after_a_secret_are_redacted(harness: Harness) -> None:
    key = api_key(harness)
    harness.call("Write", file_path=f"notes-{key}.txt", content="hello")
    harness.call("Bash", command=f"cp notes-{key}.txt copy-{key}.txt && rm notes-{key}.txt")
    data = _assert_redacted(harness)
    records = [json.loads(line) for line in data.splitlines()]
    assert any("effects" in record for record in records)


def test_the_immune_lift_reason_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    harness.lift(f"reviewed with {key}")
    _assert_redacted(harness)


# -- look-alikes -------------------------------------------------------------------------------


LOOK_ALIKES = [
    "sk-test-0000000000000000000000000000000000",  # the vendor prefix alone is public
    "sk-test-4f9a1c2",  # seven characters of the body
    "agent:bob-sk-test-token",
    "postgresql://localhost:5432/orders",  # the public parts of a known database URL
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_are_not_redacted(harness: Harness, text: str) -> None:
    assert _send(harness, "agent:bob", text) == "sent"
    data = _chain_bytes(harness)
    assert json.dumps(text).encode() in data
    assert b"[secret:" not in data


def test_a_secret_nested_past_the_inspection_depth_is_redacted(harness: Harness) -> None:
    key = api_key(harness)
    deep: Any = {"token": key, key: "as a key"}
    for _ in range(100):
        deep = [deep]
    harness.call("Glob", pattern="*.py", extra=deep)
    _assert_redacted(harness)


def test_a_container_nested_past_the_scrub_depth_is_withheld(harness: Harness) -> None:
    key = api_key(harness)
    deep: Any = key
    for _ in range(MAX_DEPTH + 50):
        deep = [deep]
    harness.call("Glob", pattern="*.py", extra=deep)
    data = _chain_bytes(harness)
    assert key.encode() not in data and WITHHELD.encode() in data


# -- the scrub itself --------------------------------------------------------------------------


KEY = "sk-test-4f9a1c2e7b3d8a6f0e5c9b2a1d7e3f8c"


@pytest.mark.parametrize(
    ("value", "core"),
    [
        (KEY, KEY.removeprefix("sk-test-")),
        ("whsec_test_7d1e9c3b5a2f8e4d", "7d1e9c3b5a2f8e4d"),
        ("0123456789abcdef", "0123456789abcdef"),
        ("postgresql://orders:hunter2-test@localhost:5432/orders", None),  # not a token
        ("hunter2-test", None),  # too short for its parts to be told from words
        ("correct horse battery staple", None),
        ("abcdefghijklmnopqrstuvwx", None),  # no digit: a word, not a token
    ],
)
def test_which_values_have_their_runs_redacted(value: str, core: str | None) -> None:
    assert fragment_core(value) == core


def test_the_scrub_reaches_every_field_and_leaves_the_rest() -> None:
    kept = KeptSecrets()
    kept.add(KEY, ".env:API_KEY")
    scrub = RecordScrub([], SecretLedger(), kept)
    marker = f"[secret:{fingerprint(KEY)}]"
    draft = RecordDraft(
        tool=f"run_{KEY[:20]}",
        category="unknown",
        target="t",
        targets=("t", KEY[20:]),
        params={KEY[8:30]: "x"},
        constraints=("rule:default",),
        error_message=f"no tool {KEY[10:]}",
        extra={"reason": f"quoted {KEY[5:25]}", "door": "scripted", "n": 3},
        kind="call",
    )
    done = scrub(draft)
    assert done.tool == f"run_sk-test-{marker}"
    assert done.targets == ("t", marker)
    assert done.params == {marker: "x"}
    assert done.error_message == f"no tool {marker}"
    assert done.extra == {"reason": f"quoted st-{marker}", "door": "scripted", "n": 3}
    assert (done.category, done.target, done.constraints) == ("unknown", "t", ("rule:default",))
    plain = RecordDraft(tool="Read", category="file_read", params={"file_path": "sk-test-4f9a"})
    assert scrub(plain) is plain
