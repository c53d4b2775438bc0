"""Cassettes stand in for a whole upstream session: handshake, tools, resources, prompts,
completions, and what the upstream asks the client during a call.

Recorded from a real MCP server process (``library_server.py``), replayed through the real
proxy to a real ``mcp`` client session with no upstream process.
"""

from __future__ import annotations

import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
import yaml
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from proxy_support import launched
from pydantic import BaseModel
from secret_support import api_key

from pytest_harness_audit.doors.proxy.cassette import CassetteError, Interaction
from pytest_harness_audit.session.harness import Harness

HERE = Path(__file__).resolve().parent
LIBRARY = [sys.executable, str(HERE / "library_server.py")]
Step = Callable[[ClientSession], Awaitable[Any]]


def library(marker: Path | None = None) -> dict[str, Any]:
    """The library server as an ``mcpServers`` entry named ``lib`` (marking its start)."""
    env = {"LIBRARY_STARTED": str(marker)} if marker is not None else {}
    argv = launched(LIBRARY)
    return {"mcpServers": {"lib": {"command": argv[0], "args": argv[1:], "env": env}}}


def dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


class Sampler:
    """A client's model: answers each sampling request, counting them."""

    def __init__(self, model: str = "stub") -> None:
        self.model = model
        self.asked: list[str] = []

    async def __call__(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        assert isinstance(content, types.TextContent)
        self.asked.append(content.text)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text=content.text.upper()), model=self.model
        )


async def run_client(proxy: Any, steps: dict[str, Step], **options: Any) -> dict[str, Any]:
    """Initialize, then run each step; an MCP error is kept as ``("error", message)``."""
    out: dict[str, Any] = {}
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=30) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1], **options) as session,
    ):
        init = await session.initialize()
        out["capabilities"] = dump(init.capabilities)
        out["instructions"] = init.instructions
        for name, step in steps.items():
            try:
                out[name] = dump(await step(session))
            except MCPError as exc:
                out[name] = ("error", exc.error.message)
    return out


WHOLE_SESSION: dict[str, Step] = {
    "tools": lambda s: s.list_tools(),
    "lookup": lambda s: s.call_tool("lookup", {"book": "dune"}),
    "resources": lambda s: s.list_resources(),
    "templates": lambda s: s.list_resource_templates(),
    "catalog": lambda s: s.read_resource("library://catalog"),
    "book": lambda s: s.read_resource("library://books/emma"),
    "env": lambda s: s.read_resource("library://env"),
    "prompts": lambda s: s.list_prompts(),
    "review": lambda s: s.get_prompt("review", {"book": "dune", "tone": "harsh"}),
    "complete": lambda s: s.complete(
        types.PromptReference(type="ref/prompt", name="review"), {"name": "book", "value": "d"}
    ),
    "ask": lambda s: s.call_tool("ask_model", {"prompt": "hello"}),
}


def view(harness: Harness) -> list[tuple[str, str]]:
    return [(c.tool, c.status) for c in harness.calls()]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One session recorded from the real library server (shared by the tests below)."""
    folder = tmp_path_factory.mktemp("library")
    cassette = folder / "library.yaml"
    harness = Harness.create(folder, template="python-service")
    try:
        proxy = harness.start_proxy(library(), workspace_tools=False, record=cassette)
        sampler = Sampler()
        answers = anyio.run(lambda: run_client(proxy, WHOLE_SESSION, sampling_callback=sampler))
    finally:
        harness.close()
    return {
        "cassette": cassette,
        "answers": answers,
        "calls": view(harness),
        "asked": sampler.asked,
        "secret": api_key(harness),
        "root": str(harness.root),
    }


def in_root(value: Any, root: str) -> Any:
    if isinstance(value, dict):
        return {k: in_root(v, root) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [in_root(v, root) for v in value]
    return value.replace(root, "{workspace}") if isinstance(value, str) else value


def test_the_cassette_holds_every_kind_of_exchange_and_no_secret(
    recorded: dict[str, Any],
) -> None:
    text = recorded["cassette"].read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    (upstream,) = document["upstreams"]
    assert upstream["server_info"]["name"] == "library-upstream"
    assert upstream["instructions"].startswith("Read library://catalog first")
    assert {"resources", "prompts", "completions", "tools"} <= set(upstream["capabilities"])
    kinds = [
        (i["method"], i.get("tool") or i.get("uri") or i.get("prompt") or i.get("ref"))
        for i in document["interactions"]
    ]
    assert kinds == [
        ("tools/call", "lookup"),
        ("resources/list", None),
        ("resources/templates/list", None),
        ("resources/read", "library://catalog"),
        ("resources/read", "library://books/emma"),
        ("resources/read", "library://env"),
        ("prompts/list", None),
        ("prompts/get", "review"),
        ("completion/complete", {"type": "ref/prompt", "name": "review"}),
        ("tools/call", "ask_model"),
    ]
    # the secret the server read from .env reaches neither the client (the read is gated and
    # its contents redacted) nor the cassette
    assert recorded["secret"] not in str(recorded["answers"]["env"])
    assert "[secret:" in str(recorded["answers"]["env"])
    assert recorded["secret"] not in text
    env_read = document["interactions"][5]
    assert "[secret:" in env_read["result"]["contents"][0]["text"]
    # the sampling the upstream asked for during ask_model, with the client's answer
    (asked,) = document["interactions"][-1]["client_requests"]
    assert asked["method"] == "sampling/createMessage"
    assert asked["params"]["messages"][0]["content"]["text"] == "hello"
    assert asked["answer"]["result"]["content"]["text"] == "HELLO"


def test_a_whole_session_replays_with_no_upstream_process(
    recorded: dict[str, Any], harness_factory: Any, tmp_path: Path
) -> None:
    harness: Harness = harness_factory("python-service")
    marker = tmp_path / "started"
    proxy = harness.start_proxy(library(marker), workspace_tools=False, replay=recorded["cassette"])
    sampler = Sampler()
    answers = anyio.run(lambda: run_client(proxy, WHOLE_SESSION, sampling_callback=sampler))
    harness.close()
    assert not marker.exists()
    expected = in_root(recorded["answers"], recorded["root"])
    got = in_root(answers, str(harness.root))
    secret_free = {k: v for k, v in expected.items() if k != "env"}
    assert {k: v for k, v in got.items() if k != "env"} == secret_free
    assert got["capabilities"]["resources"] is not None and got["instructions"]
    # the replayed .env read shows the placeholder where the secret was
    assert "[secret:" in str(got["env"]) and api_key(harness) not in str(got["env"])
    # the client was asked again, so the chain holds the same records
    assert sampler.asked == recorded["asked"] == ["hello"]
    assert view(harness) == recorded["calls"]
    assert ("mcp__lib__sampling/createMessage", "success") in view(harness)
    assert harness.verify().valid


def test_an_unmatched_resource_read_is_one_line_naming_it(
    recorded: dict[str, Any], harness_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(workspace_tools=False, replay=recorded["cassette"])
    answers = anyio.run(
        lambda: run_client(
            proxy,
            {
                "missing": lambda s: s.read_resource("library://books/unknown"),
                "other_args": lambda s: s.get_prompt("review", {"book": "emma"}),
            },
        )
    )
    kind, message = answers["missing"]
    assert kind == "error" and "\n" not in message
    assert message == (
        f"cassette {recorded['cassette']}: no recorded call matches resources/read "
        "'library://books/unknown' of upstream 'lib' with arguments {}"
    )
    kind, message = answers["other_args"]
    assert "no recorded call matches prompts/get 'review'" in message and "'emma'" in message
    lines = [line for line in capsys.readouterr().err.splitlines() if "no recorded call" in line]
    assert len(lines) == 2 and "resources/read" in lines[0] and "prompts/get" in lines[1]


def test_match_on_name_ignores_prompt_arguments(
    recorded: dict[str, Any], harness_factory: Any
) -> None:
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(
        workspace_tools=False, replay=recorded["cassette"], match_on=("name",)
    )
    answers = anyio.run(
        lambda: run_client(
            proxy,
            {
                "review": lambda s: s.get_prompt("review", {"book": "emma"}),
                "book": lambda s: s.read_resource("library://books/dune"),
            },
        )
    )
    assert "Dune" in str(answers["review"])  # the recorded prompt, whatever the arguments
    assert answers["book"][0] == "error"  # a different URI is a different name


def test_a_callable_matcher_sees_the_kind_and_the_uri(
    recorded: dict[str, Any], harness_factory: Any
) -> None:
    seen: list[tuple[str, str]] = []

    def any_book(recorded_one: Interaction, call: Interaction) -> bool:
        seen.append((call.method, call.name))
        if call.method == "resources/read":
            return recorded_one.name.startswith("library://books/")
        return recorded_one.name == call.name and recorded_one.arguments == call.arguments

    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(
        workspace_tools=False, replay=recorded["cassette"], match_on=any_book
    )
    answers = anyio.run(
        lambda: run_client(proxy, {"book": lambda s: s.read_resource("library://books/dune")})
    )
    assert "Emma" in str(answers["book"])
    assert ("resources/read", "library://books/dune") in seen


def test_new_appends_what_the_cassette_lacks(
    recorded: dict[str, Any], harness_factory: Any, tmp_path: Path
) -> None:
    cassette = tmp_path / "library.yaml"
    shutil.copy(recorded["cassette"], cassette)
    marker = tmp_path / "started"

    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(
        library(marker), workspace_tools=False, cassette=cassette, record_mode="new"
    )
    answers = anyio.run(
        lambda: run_client(proxy, {"catalog": lambda s: s.read_resource("library://catalog")})
    )
    assert "dune: Dune" in str(answers["catalog"])
    assert not marker.exists()  # served from the cassette: the upstream did not start
    answers = anyio.run(
        lambda: run_client(
            proxy,
            {
                "dune": lambda s: s.read_resource("library://books/dune"),
                "lookup": lambda s: s.call_tool("lookup", {"book": "emma"}),
            },
        )
    )
    harness.close()
    assert marker.exists()  # started for the reads the cassette lacked
    assert "Dune, by Frank Herbert" in str(answers["dune"])
    assert "Emma, by Jane Austen" in str(answers["lookup"])
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    assert [
        (i["method"], i.get("uri") or i.get("tool")) for i in document["interactions"][-2:]
    ] == [
        ("resources/read", "library://books/dune"),
        ("tools/call", "lookup"),
    ]
    assert (
        len(document["interactions"])
        == len(yaml.safe_load(recorded["cassette"].read_text(encoding="utf-8"))["interactions"]) + 2
    )

    # the appended reads now replay with no upstream at all
    marker.unlink()
    again: Harness = harness_factory("python-service")
    proxy = again.start_proxy(library(marker), workspace_tools=False, replay=cassette)
    answers = anyio.run(
        lambda: run_client(proxy, {"dune": lambda s: s.read_resource("library://books/dune")})
    )
    again.close()
    assert not marker.exists() and "Dune, by Frank Herbert" in str(answers["dune"])


def test_new_with_nothing_lacking_leaves_the_cassette_untouched(
    recorded: dict[str, Any], harness_factory: Any, tmp_path: Path
) -> None:
    cassette = tmp_path / "library.yaml"
    shutil.copy(recorded["cassette"], cassette)
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(
        library(tmp_path / "started"), workspace_tools=False, cassette=cassette, record_mode="new"
    )
    anyio.run(lambda: run_client(proxy, {"prompts": lambda s: s.list_prompts()}))
    harness.close()
    assert cassette.read_bytes() == recorded["cassette"].read_bytes()
    assert not (tmp_path / "started").exists()


def test_new_names_an_upstream_that_cannot_record(
    recorded: dict[str, Any], harness_factory: Any, tmp_path: Path
) -> None:
    cassette = tmp_path / "library.yaml"
    shutil.copy(recorded["cassette"], cassette)
    broken = {"mcpServers": {"lib": {"command": sys.executable, "args": ["-c", "pass"]}}}
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(broken, workspace_tools=False, cassette=cassette, record_mode="new")
    answers = anyio.run(
        lambda: run_client(proxy, {"dune": lambda s: s.read_resource("library://books/dune")})
    )
    harness.close()
    kind, message = answers["dune"]
    assert kind == "error" and "\n" not in message
    assert "no recorded call matches resources/read 'library://books/dune'" in message
    assert "the upstream could not record it" in message
    assert cassette.read_bytes() == recorded["cassette"].read_bytes()


def test_a_replayed_call_whose_client_answers_otherwise_says_so(
    recorded: dict[str, Any], harness_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(workspace_tools=False, replay=recorded["cassette"])
    other = Sampler(model="another-model")
    answers = anyio.run(
        lambda: run_client(proxy, {"ask": WHOLE_SESSION["ask"]}, sampling_callback=other)
    )
    assert other.asked == ["hello"]
    assert "stub said: HELLO" in str(answers["ask"])  # the recorded result
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "differently" in line]
    assert "sampling/createMessage of tools/call 'ask_model'" in line


def test_a_replayed_call_to_a_client_without_sampling_is_recorded_refused(
    recorded: dict[str, Any], harness_factory: Any
) -> None:
    harness: Harness = harness_factory("python-service")
    proxy = harness.start_proxy(workspace_tools=False, replay=recorded["cassette"])
    anyio.run(lambda: run_client(proxy, {"ask": WHOLE_SESSION["ask"]}))
    assert view(harness) == [
        ("mcp__lib__sampling/createMessage", "error"),
        ("mcp__lib__ask_model", "success"),
    ]


ENTRY = "version: 1\nupstreams: [{name: lib}]\ninteractions:\n- "


@pytest.mark.parametrize(
    ("entry", "problem"),
    [
        (
            "{method: resources/write, upstream: lib, uri: 'x://y', result: {}}",
            "interactions[0].method 'resources/write' is not a kind a cassette holds",
        ),
        (
            "{method: resources/read, upstream: lib, tool: 'x://y', result: {contents: []}}",
            "interactions[0].tool: not a field of a resources/read entry",
        ),
        (
            "{method: resources/read, upstream: lib, result: {contents: []}}",
            "interactions[0].uri must be a string, got None",
        ),
        (
            "{method: completion/complete, upstream: lib, ref: review, result: {}}",
            "interactions[0].ref must be {type: ref/prompt, name: …}",
        ),
        (
            "{method: resources/read, upstream: lib, uri: 'x://y', result: {contents: 5}}",
            "interactions[0].result.contents: ",
        ),
        (
            "{method: prompts/get, upstream: lib, prompt: p, error: {code: x}}",
            "interactions[0].error.code: ",
        ),
        (
            "{upstream: lib, tool: t, result: {content: []}, "
            "client_requests: [{method: tools/call}]}",
            "interactions[0].client_requests[0].method 'tools/call' is not a request",
        ),
        (
            "version: 1\nupstreams: [{name: lib, capabilites: {}}]\ninteractions: []",
            "upstreams[0].capabilites: not a field of an upstream",
        ),
    ],
)
def test_a_bad_entry_is_one_line_naming_file_entry_and_field(
    harness_factory: Any, tmp_path: Path, entry: str, problem: str
) -> None:
    bad = tmp_path / "bad.yaml"
    document = entry if entry.startswith("version:") else ENTRY + entry
    bad.write_text(document + "\n", encoding="utf-8")
    harness: Harness = harness_factory("python-service")
    harness.call("Read", file_path="README.md")
    with pytest.raises(CassetteError) as caught:
        harness.start_proxy(workspace_tools=False, replay=bad)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"cassette {bad}: ")
    assert problem in message
    assert view(harness) == [("Read", "success")] and harness.verify().valid


def test_older_tool_only_entries_still_load(tmp_path: Path) -> None:
    from pytest_harness_audit.doors.proxy.cassette import load_cassette

    old = tmp_path / "old.yaml"
    old.write_text(
        ENTRY + "{upstream: lib, tool: t, arguments: {a: 1}, result: {content: []}}\n",
        encoding="utf-8",
    )
    (only,) = load_cassette(old).interactions
    assert (only.method, only.name, only.tool, only.arguments) == ("tools/call", "t", "t", {"a": 1})


class Answering:
    """A client's user and roots: answers elicitation and roots requests, counting them."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(f"elicitation: {params.message}")
        return types.ElicitResult(action="accept", content={"colour": "teal"})

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project", name="p")])

    def options(self) -> dict[str, Any]:
        return {"elicitation_callback": self.elicit, "list_roots_callback": self.list_roots}


@pytest.mark.slow
def test_elicitation_and_roots_during_a_call_are_asked_again_on_replay(
    harness_factory: Any, tmp_path: Path
) -> None:
    asking = {
        "mcpServers": {"ask": {"command": sys.executable, "args": [str(HERE / "asking_server.py")]}}
    }
    steps: dict[str, Step] = {
        "user": lambda s: s.call_tool("ask_user", {"question": "Which colour?"}),
        "roots": lambda s: s.call_tool("roots", {}),
    }
    cassette = tmp_path / "asking.yaml"
    first: Harness = harness_factory("python-service")
    proxy = first.start_proxy(asking, workspace_tools=False, record=cassette)
    live_client = Answering()
    live = anyio.run(lambda: run_client(proxy, steps, **live_client.options()))
    first.close()
    methods = [
        [r["method"] for r in i.get("client_requests", [])]
        for i in yaml.safe_load(cassette.read_text(encoding="utf-8"))["interactions"]
    ]
    assert methods == [["elicitation/create"], ["roots/list"]]

    second: Harness = harness_factory("python-service")
    marker = tmp_path / "started"
    proxy = second.start_proxy(
        {
            "mcpServers": {
                "ask": {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w')"]}
            }
        },
        workspace_tools=False,
        replay=cassette,
    )
    replay_client = Answering()
    replayed = anyio.run(lambda: run_client(proxy, steps, **replay_client.options()))
    second.close()
    assert not marker.exists()
    assert replayed == live and "accept: teal" in str(replayed["user"])
    assert replay_client.asked == live_client.asked == ["elicitation: Which colour?", "roots"]
    assert view(second) == view(first)
    assert ("mcp__ask__elicitation/create", "success") in view(second)


def free_port() -> int:
    """A free loopback port below the ephemeral range.

    A port the kernel hands out for outgoing connections could be taken by one (or by a client
    connecting to itself) while a test's server is down, and the restart would then fail.
    """
    for _ in range(100):
        candidate = random.randrange(20000, 32000)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return candidate
    raise AssertionError("no free loopback port below the ephemeral range")


def serve_library_http(port: int) -> subprocess.Popen[bytes]:
    """The library server on streamable HTTP, once it accepts connections."""
    # a pipe left unread would stall a server that logs each request: its errors go to a file
    log_path = Path(tempfile.mkstemp(suffix=".log")[1])
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*LIBRARY, "--http", str(port)], stdout=subprocess.DEVNULL, stderr=log
        )
    deadline = time.monotonic() + 60  # a loaded CI machine imports the SDK slowly
    while time.monotonic() < deadline:
        if process.poll() is not None:
            error = log_path.read_text(encoding="utf-8", errors="replace")
            raise AssertionError(f"the library server exited: {error[-2000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.05)
    process.kill()
    raise AssertionError("the library server did not start within 60 s")


@pytest.mark.slow
def test_an_http_upstream_that_comes_back_is_still_recorded(
    harness_factory: Any, tmp_path: Path
) -> None:
    port = free_port()
    server = serve_library_http(port)
    cassette = tmp_path / "http.yaml"
    harness: Harness = harness_factory("python-service")
    upstream = {"mcpServers": {"lib": {"url": f"http://127.0.0.1:{port}/mcp"}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False, record=cassette)
    try:
        before = anyio.run(
            lambda: run_client(proxy, {"catalog": lambda s: s.read_resource("library://catalog")})
        )
        server.terminate()
        server.wait(10)
        lookup: Step = lambda s: s.call_tool("lookup", {"book": "emma"})  # noqa: E731
        down = anyio.run(lambda: run_client(proxy, {"lookup": lookup}))
        server = serve_library_http(port)  # back: the next call connects afresh
        after = anyio.run(
            lambda: run_client(
                proxy,
                {"lookup": lookup, "book": lambda s: s.read_resource("library://books/dune")},
            )
        )
    finally:
        harness.close()
        server.terminate()
        server.wait(10)
    assert "unreachable" in str(down["lookup"]) and "Emma" in str(after["lookup"])
    assert "Dune" in str(before["catalog"]) and "Dune" in str(after["book"])
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    # the reconnected session is recorded as the first was
    assert [(i["method"], i.get("uri") or i.get("tool")) for i in document["interactions"]] == [
        ("resources/read", "library://catalog"),
        ("tools/call", "lookup"),
        ("resources/read", "library://books/dune"),
    ]


@pytest.mark.slow
def test_an_sdk_server_restarted_between_calls_gets_a_new_session(
    harness_factory: Any, tmp_path: Path
) -> None:
    # An SDK server that restarted answers the old session id with 404 "Session not found":
    # the proxy opens a new session at once, with no call lost while the server was down.
    port = free_port()
    server = serve_library_http(port)
    harness: Harness = harness_factory("python-service")
    upstream = {"mcpServers": {"lib": {"url": f"http://127.0.0.1:{port}/mcp"}}}
    proxy = harness.start_proxy(upstream, workspace_tools=False)
    lookup: Step = lambda s: s.call_tool("lookup", {"book": "emma"})  # noqa: E731
    try:
        before = anyio.run(lambda: run_client(proxy, {"lookup": lookup}))
        server.terminate()
        server.wait(10)
        server = serve_library_http(port)
        after = anyio.run(lambda: run_client(proxy, {"lookup": lookup}))
    finally:
        harness.close()
        server.terminate()
        server.wait(10)
    assert "Emma" in str(before["lookup"])
    assert "Emma" in str(after["lookup"]), after
