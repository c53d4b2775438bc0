"""``resources/read`` and ``prompts/get`` through the proxy go through the gate like tool calls.

A real upstream (``files_server.py``) serves the workspace's files as ``file://`` resources, a
base64 blob and a prompt carrying the ``.env``; a real ``mcp`` client reads them through the
proxy of a ``safety`` session. Each read is decided (a credential file is refused before the
upstream is asked), recorded, inspected (a known secret is redacted, text or blob) and judged.
"""

from __future__ import annotations

import base64
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.shared.exceptions import MCPError
from proxy_support import launched
from secret_support import api_key, proxy_client

from pytest_harness_audit.doors.proxy.gated_reads import read_params
from pytest_harness_audit.policy.path_forms import file_uri_path
from pytest_harness_audit.session.harness import Harness

FILES = Path(__file__).resolve().parent / "files_server.py"
Step = Callable[[ClientSession], Awaitable[Any]]


def files() -> dict[str, Any]:
    argv = launched([sys.executable, str(FILES)])
    return {"mcpServers": {"files": {"command": argv[0], "args": argv[1:]}}}


async def _run(proxy: Any, steps: list[Step]) -> list[Any]:
    """Each step's result, or ``("error", message)`` for an MCP error."""
    out: list[Any] = []
    async with proxy_client(proxy) as session:
        for step in steps:
            try:
                out.append(await step(session))
            except MCPError as exc:
                out.append(("error", exc.error.message))
    return out


def read(uri: str) -> Step:
    return lambda session: session.read_resource(uri)


def proxy_of(harness: Harness) -> Any:
    return harness.start_proxy(files(), workspace_tools=False)


def reads(harness: Harness) -> list[Any]:
    return [c for c in harness.calls() if c.tool == "mcp__files__resources/read"]


@pytest.fixture
def harness(tmp_path: Path) -> Any:
    made = Harness.create(tmp_path, template="python-service", policy="safety")
    (made.root / ".env.example").write_text("API_KEY=your-key-here\n", encoding="utf-8")
    yield made
    made.close()


# -- the parameters a read is judged with (no process) --------------------------------------


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///ws/.env", "/ws/.env"),
        ("file://localhost/ws/.env", "/ws/.env"),
        ("FILE:///ws/.env", "/ws/.env"),
        ("file:///ws/%2Eenv", "/ws/.env"),
        ("file:///ws/%2e%65nv", "/ws/.env"),
        ("file:///ws/.env?raw=1", "/ws/.env"),
        ("file:///ws/.env#top", "/ws/.env"),
        ("file:///ws/app/../.env", "/ws/app/../.env"),
        ("file://fileserver/share/.env", "//fileserver/share/.env"),
        ("file:.env", ".env"),
    ],
)
def test_a_file_uri_is_judged_as_the_path_it_names(uri: str, path: str) -> None:
    assert file_uri_path(uri) == path
    assert read_params(uri) == {"uri": uri, "path": path}


@pytest.mark.parametrize("uri", ["library://env", "docs://env-docs", "https://example.com/.env"])
def test_another_uri_is_judged_as_itself(uri: str) -> None:
    assert file_uri_path(uri) is None
    assert read_params(uri) == {"uri": uri, "url": uri}


@pytest.mark.parametrize(
    ("uri", "url"),
    [
        ("repo://.%65nv", "repo://.env"),
        ("repo://%2Eenv", "repo://.env"),
        ("repo://%252Eenv", "repo://.env"),  # for a server that decodes twice
        ("repo://config/cred%65ntials.json", "repo://config/credentials.json"),
        ("repo://docs/../.env", "repo://.env"),
        ("repo://docs/%2E%2E/.env?v=%41", "repo://.env?v=%41"),
        ("repo://a/./b/../../../.env", "repo://.env"),
        ("repo://.env%00.txt", "repo://.env"),
    ],
)
def test_another_uri_is_judged_as_its_decoded_path(uri: str, url: str) -> None:
    assert read_params(uri) == {"uri": uri, "url": url}


# -- through a real proxy ---------------------------------------------------------------------


@pytest.mark.slow
def test_a_file_env_read_is_denied_before_the_upstream_is_asked(harness: Harness) -> None:
    key = api_key(harness)
    root = harness.root.resolve()
    uris = [
        (root / ".env").as_uri(),
        f"file://localhost{root}/.env",
        f"FILE://{root}/.env",
        f"file://{root}/%2Eenv",
        f"file://{root}/app/../.env",
        f"file://{root}//.env",
        f"file://{root}/.env?raw=1",
        f"file://{root}/.ENV",
        f"file://{root}/config/credentials.json",
        f"file://{root.parent}/elsewhere/.env",
        "file:///root/.aws/credentials",
    ]
    proxy = harness.start_proxy(files(), workspace_tools=False)
    answers = anyio.run(_run, proxy, [read(uri) for uri in uris])
    for uri, answer in zip(uris, answers, strict=True):
        assert answer[0] == "error" and answer[1].startswith("[blocked]"), uri
        assert key not in answer[1]
    # the first denials name the rule; then the immune ladder quarantines the session
    assert answers[0][1].startswith("[blocked] [web4-policy]")
    assert "(rule deny-secret-files)" in answers[0][1]
    assert answers[-1][1].startswith("[blocked] [web4-immune] quarantined")
    records = reads(harness)
    assert [c.status for c in records] == ["blocked"] * len(uris)
    assert {c.category for c in records} == {"file_read"}
    # every spelling was judged a credential read by the policy, quarantined or not
    assert [c.rule_id for c in records] == ["deny-secret-files"] * len(uris)
    assert records[0].params == {"uri": uris[0], "path": str(root / ".env")}
    assert harness.verdict == "FAIL"
    assert harness.verify().valid


@pytest.mark.slow
def test_a_benign_resource_read_is_allowed_and_recorded(harness: Harness) -> None:
    readme = (harness.root.resolve() / "README.md").as_uri()
    proxy = harness.start_proxy(files(), workspace_tools=False)
    (answer,) = anyio.run(_run, proxy, [read(readme)])
    text = (harness.root / "README.md").read_text(encoding="utf-8")
    assert answer.contents[0].text == text
    (call,) = reads(harness)
    assert (call.status, call.category, call.decision) == ("success", "file_read", "allow")
    assert call.params is not None and call.params["uri"] == readme
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_a_templated_read_and_a_symlink_to_the_env_are_judged_by_the_file(
    harness: Harness,
) -> None:
    key = api_key(harness)
    root = harness.root.resolve()
    (root / "notes.txt").symlink_to(".env")
    pricing, notes = anyio.run(
        _run,
        proxy_of(harness),
        [read(f"file://{root}/app/pricing.py"), read(f"file://{root}/notes.txt")],
    )
    assert pricing.contents[0].text == (root / "app" / "pricing.py").read_text(encoding="utf-8")
    assert notes[0] == "error" and key not in notes[1] and "deny-secret-files" in notes[1]
    assert [c.status for c in reads(harness)] == ["success", "blocked"]
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_benign_look_alikes_are_allowed(harness: Harness) -> None:
    example = (harness.root.resolve() / ".env.example").as_uri()
    proxy = harness.start_proxy(files(), workspace_tools=False)
    template, docs = anyio.run(_run, proxy, [read(example), read("docs://env-docs")])
    assert template.contents[0].text == "API_KEY=your-key-here\n"
    assert docs.contents[0].text.startswith("Copy .env.example to .env")
    assert [(c.status, c.target) for c in reads(harness)] == [
        ("success", str(harness.root.resolve() / ".env.example")),
        ("success", "docs://env-docs"),
    ]
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_a_secret_in_a_resource_is_redacted_as_text_and_as_blob(harness: Harness) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(files(), workspace_tools=False)
    text, blob = anyio.run(_run, proxy, [read("docs://settings"), read("blob://env")])
    assert key not in text.contents[0].text and "API_KEY=[secret:" in text.contents[0].text
    served = blob.contents[0].blob
    assert key not in served and "[secret:" in served
    decoded = base64.b64decode(served.split("[secret:")[0] + "==", validate=False)
    assert key.encode() not in decoded
    assert [c.status for c in reads(harness)] == ["success", "success"]
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_an_upstream_error_is_recorded_and_passed_on_redacted(harness: Harness) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(files(), workspace_tools=False)

    async def broken_data(session: ClientSession) -> Any:
        try:
            await session.read_resource("docs://broken-data")
        except MCPError as exc:
            return exc.error.message, exc.error.data
        return None

    missing, broken, data = anyio.run(
        _run, proxy, [read("docs://missing"), read("docs://broken"), broken_data]
    )
    assert data[0] == "cannot parse"  # the data held the .env: relayed redacted
    assert key not in data[1] and "[secret:" in data[1]
    assert missing == ("error", "no resource docs://missing")
    assert broken[0] == "error" and broken[1].startswith("cannot parse line")
    assert key not in broken[1] and "[secret:" in broken[1]
    records = reads(harness)
    assert (records[0].status, records[0].error_message) == ("error", "no resource docs://missing")
    assert records[1].status == "error"
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_prompt_carrying_a_secret_is_recorded_and_redacted(harness: Harness) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(files(), workspace_tools=False)

    def deploy(session: ClientSession) -> Any:
        return session.get_prompt("deploy")

    (prompt,) = anyio.run(_run, proxy, [deploy])
    text = prompt.messages[0].content.text
    assert text.startswith("Deploy with these settings:")
    assert key not in text and "API_KEY=[secret:" in text
    (call,) = [c for c in harness.calls() if c.tool == "mcp__files__prompts/get"]
    assert call.status == "success" and call.params == {"name": "deploy", "arguments": {}}
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_benign_prompt_passes_and_is_recorded(harness: Harness) -> None:
    proxy = harness.start_proxy(files(), workspace_tools=False)

    def greet(session: ClientSession) -> Any:
        return session.get_prompt("greet", {"who": "the team"})

    (prompt,) = anyio.run(_run, proxy, [greet])
    assert prompt.messages[0].content.text == "Say hello to the team."
    (call,) = [c for c in harness.calls() if c.tool == "mcp__files__prompts/get"]
    assert call.params == {"name": "greet", "arguments": {"who": "the team"}}
    assert harness.verdict == "PASS"


@pytest.mark.slow
def test_a_prompt_argument_carrying_a_secret_is_refused(harness: Harness) -> None:
    key = api_key(harness)
    proxy = harness.start_proxy(files(), workspace_tools=False)

    def greet(session: ClientSession) -> Any:
        return session.get_prompt("greet", {"who": key})

    ((kind, message),) = anyio.run(_run, proxy, [greet])
    assert kind == "error" and message.startswith("[blocked]") and key not in message
    (call,) = [c for c in harness.calls() if c.tool == "mcp__files__prompts/get"]
    assert call.status == "blocked"
    assert harness.verdict == "FAIL"
    assert key not in harness.chain.path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_listings_are_unaffected_and_unrecorded(harness: Harness) -> None:
    proxy = harness.start_proxy(files(), workspace_tools=False)
    before = len(harness.calls())
    listed, templates, prompts = anyio.run(
        _run,
        proxy,
        [
            lambda s: s.list_resources(),
            lambda s: s.list_resource_templates(),
            lambda s: s.list_prompts(),
        ],
    )
    names = {r.name for r in listed.resources}
    assert {".env", ".env.example", "README.md", "env-docs", "env-blob"} <= names
    assert [t.uri_template for t in templates.resource_templates] == ["file://{path}"]
    assert {p.name for p in prompts.prompts} == {"deploy", "greet"}
    assert len(harness.calls()) == before
    assert harness.verdict == "PASS"


CASSETTE = """\
version: 1
upstreams:
- name: files
  server_info: {name: files-upstream, version: "1"}
  capabilities: {resources: {}, prompts: {}}
  instructions: null
  tools: []
interactions:
- method: resources/read
  upstream: files
  uri: file://{workspace}/.env
  result:
    contents:
    - {uri: "file://{workspace}/.env", text: "API_KEY=[secret:0123456789abcdef]"}
- method: resources/read
  upstream: files
  uri: file://{workspace}/README.md
  result:
    contents:
    - {uri: "file://{workspace}/README.md", text: "# Orders service"}
- method: prompts/get
  upstream: files
  prompt: greet
  arguments: {who: team}
  result:
    messages:
    - {role: user, content: {type: text, text: Say hello to team.}}
"""


@pytest.mark.slow
def test_a_replayed_read_is_gated_and_recorded(harness: Harness, tmp_path: Path) -> None:
    cassette = tmp_path / "files.yaml"
    cassette.write_text(CASSETTE, encoding="utf-8")
    root = harness.root
    proxy = harness.start_proxy(workspace_tools=False, replay=cassette)
    env, readme, greet = anyio.run(
        _run,
        proxy,
        [
            read(f"file://{root}/.env"),
            read(f"file://{root}/README.md"),
            lambda s: s.get_prompt("greet", {"who": "team"}),
        ],
    )
    assert env[0] == "error" and "deny-secret-files" in env[1]
    assert readme.contents[0].text == "# Orders service"
    assert greet.messages[0].content.text == "Say hello to team."
    assert [(c.tool, c.status) for c in harness.calls()] == [
        ("mcp__files__resources/read", "blocked"),
        ("mcp__files__resources/read", "success"),
        ("mcp__files__prompts/get", "success"),
    ]
    assert harness.verdict == "FAIL"


@pytest.mark.slow
def test_strict_denies_reads_by_default_as_it_denies_upstream_tools(tmp_path: Path) -> None:
    harness = Harness.create(tmp_path, template="python-service", policy="strict")
    try:
        readme = (harness.root.resolve() / "README.md").as_uri()
        proxy = harness.start_proxy(files(), workspace_tools=False)
        ((kind, message),) = anyio.run(_run, proxy, [read(readme)])
        assert kind == "error" and message == "[blocked] [web4-policy] Default policy: deny"
        assert [c.status for c in reads(harness)] == ["blocked"]
    finally:
        harness.close()
