"""What the proxy sends upstream besides a call's arguments is checked for known secrets too: a
tools/call's forwarded ``_meta`` (judged with the arguments), and the strings of the requests
relayed ungated (``completion/complete``, ``resources/subscribe``/``unsubscribe``): a request
holding a known secret is refused with a JSON-RPC error and recorded, so the verdict fails.
Ordinary progress tokens, trace ids and completions pass as before."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from proxy_support import launched

from pytest_harness_audit.doors.proxy.calls import _judged_params
from pytest_harness_audit.doors.proxy.gated_reads import GatedReads, RequestBlocked
from pytest_harness_audit.doors.proxy.outgoing import completion_params, holds_secret
from pytest_harness_audit.doors.proxy.passthrough import Passthrough
from pytest_harness_audit.gate.seam import GatedCall, run_call_async
from pytest_harness_audit.session.harness import Harness

ECHO = Path(__file__).resolve().parent / "echo_meta_server.py"
SECRET = "sk-live-4f9a1c2e7b3d8a6f0e5c9b2a"

# -- which _meta keys the gate judges (no process) ------------------------------------------


@pytest.mark.parametrize(
    "meta",
    [None, {}, {"progressToken": 7}, {"io.modelcontextprotocol/related-task": {"id": "t"}}],
)
def test_hop_meta_adds_nothing_to_the_judged_params(meta: dict[str, Any] | None) -> None:
    arguments = {"book": "dune"}
    assert _judged_params(arguments, meta) is arguments


def test_forwarded_meta_is_judged_with_the_arguments() -> None:
    judged = _judged_params({"book": "dune"}, {"progressToken": 1, "trace": "t1"})
    assert judged == {"book": "dune", "_meta": {"trace": "t1"}}


def test_an_argument_named_meta_keeps_its_place() -> None:
    judged = _judged_params({"_meta": "mine"}, {"note": "x"})
    assert judged == {"_meta": "mine", "__meta": {"note": "x"}}


def test_a_completion_is_judged_without_its_client_hop_meta() -> None:
    params = types.CompleteRequestParams.model_validate(
        {
            "ref": {"type": "ref/prompt", "name": "review"},
            "argument": {"name": "book", "value": "du"},
            "context": {"arguments": {"tone": "kind"}},
            "_meta": {"progressToken": 3},
        }
    )
    judged = completion_params(params)
    assert judged["argument"] == {"name": "book", "value": "du"}
    assert judged["context"] == {"arguments": {"tone": "kind"}}
    assert "_meta" not in judged


# -- the pass-through requests with a fake upstream and gate (no process) -------------------


class _Inspector:
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.seen: list[tuple[str, str, Any]] = []

    def outgoing(self, tool: str, category: str, params: Any) -> object | None:
        self.seen.append((tool, category, params))
        if self.fail:
            raise RuntimeError("scanner down")
        return "leak" if SECRET in json.dumps(params, ensure_ascii=False) else None


@dataclass
class _Decision:
    tool: str
    params: dict[str, Any]
    blocked: bool
    message: str


@dataclass
class _Gate:
    inspectors: list[Any] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)

    def decide(self, tool: str, params: Any) -> _Decision:
        leak = holds_secret(self, tool, params)
        return _Decision(tool, dict(params), leak, "[blocked] a known secret" if leak else "")

    def record(self, decision: _Decision, **fields: Any) -> dict[str, Any]:
        self.records.append({"tool": decision.tool, **fields})
        return self.records[-1]

    async def run_async(self, tool: str, params: Any, act: Any, **_: Any) -> GatedCall:
        return await run_call_async(self, tool, params, act)  # type: ignore[arg-type]


class _Session:
    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send_request(self, request: Any, result_type: Any) -> Any:
        self.sent.append(request)
        if result_type is types.CompleteResult:
            return types.CompleteResult(completion=types.Completion(values=["dune"]))
        return types.EmptyResult()


class _Upstream:
    name = "up"
    alive = True

    def __init__(self) -> None:
        self.session = _Session()
        self.capabilities = types.ServerCapabilities(
            resources=types.ResourcesCapability(subscribe=True),
            prompts=types.PromptsCapability(),
            completions=types.CompletionsCapability(),
        )


class _ClientSession:
    client_params = None


class _Ctx:
    session = _ClientSession()
    request_id = 1


def _passthrough(inspector: _Inspector) -> tuple[Passthrough, _Upstream, _Gate]:
    upstream = _Upstream()
    gate = _Gate([inspector])
    return Passthrough([upstream], GatedReads(gate)), upstream, gate  # type: ignore[list-item,arg-type]


def _complete(value: str, context: dict[str, str] | None = None) -> types.CompleteRequestParams:
    data: dict[str, Any] = {
        "ref": {"type": "ref/prompt", "name": "review"},
        "argument": {"name": "book", "value": value},
    }
    if context is not None:
        data["context"] = {"arguments": context}
    return types.CompleteRequestParams.model_validate(data)


SECRET_REQUESTS = {
    "completion-value": lambda p: p.complete(_Ctx(), _complete(SECRET)),
    "completion-context": lambda p: p.complete(_Ctx(), _complete("du", {"tone": f"x {SECRET}"})),
    "completion-unicode-context-key": lambda p: p.complete(
        _Ctx(), _complete("du", {f"тон {SECRET}": "kind"})
    ),
    "subscribe": lambda p: p.subscribe(
        _Ctx(), types.SubscribeRequestParams(uri=f"library://books/{SECRET}")
    ),
    "unsubscribe": lambda p: p.unsubscribe(
        _Ctx(), types.UnsubscribeRequestParams(uri=f"library://books/{SECRET}")
    ),
}


@pytest.mark.parametrize("case", list(SECRET_REQUESTS))
def test_a_relayed_request_holding_a_secret_is_refused_and_recorded(case: str) -> None:
    passthrough, upstream, gate = _passthrough(_Inspector())
    with pytest.raises(RequestBlocked) as caught:
        anyio.run(SECRET_REQUESTS[case], passthrough)
    assert "known secret" in caught.value.error.message
    assert upstream.session.sent == []
    (record,) = gate.records
    assert record["status"] == "blocked"
    assert record["tool"].startswith("mcp__up__")


def test_a_relayed_request_the_scanner_cannot_read_is_refused() -> None:
    passthrough, upstream, _ = _passthrough(_Inspector(fail=True))
    with pytest.raises(RequestBlocked):
        anyio.run(lambda: passthrough.complete(_Ctx(), _complete("du")))  # type: ignore[arg-type]
    assert upstream.session.sent == []


def test_ordinary_relayed_requests_pass_unrecorded() -> None:
    inspector = _Inspector()
    passthrough, upstream, gate = _passthrough(inspector)

    async def run() -> Any:
        await passthrough.subscribe(_Ctx(), types.SubscribeRequestParams(uri="library://books/x"))  # type: ignore[arg-type]
        return await passthrough.complete(_Ctx(), _complete("du", {"tone": "kind"}))  # type: ignore[arg-type]

    result = anyio.run(run)
    assert result.completion.values == ["dune"]
    assert len(upstream.session.sent) == 2
    assert gate.records == []
    assert [seen[0] for seen in inspector.seen] == [
        "mcp__up__resources/subscribe",
        "mcp__up__completion/complete",
        "mcp__up__completion/complete",  # the upstream's answer, read before it is relayed
    ]


class _FailingSession(_Session):
    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message

    async def send_request(self, request: Any, result_type: Any) -> Any:
        self.sent.append(request)
        raise MCPError(code=types.INVALID_PARAMS, message=self.message, data={"why": self.message})


ANSWERED = {
    "subscribe": lambda p: p.subscribe(
        _Ctx(), types.SubscribeRequestParams(uri="library://books/x")
    ),
    "unsubscribe": lambda p: p.unsubscribe(
        _Ctx(), types.UnsubscribeRequestParams(uri="library://books/x")
    ),
    "completion": lambda p: p.complete(_Ctx(), _complete("du")),
}


@pytest.mark.parametrize("case", list(ANSWERED))
def test_an_upstream_error_holding_a_secret_is_recorded(case: str) -> None:
    passthrough, upstream, gate = _passthrough(_Inspector())
    upstream.session = _FailingSession(f"no such book: {SECRET}")
    with pytest.raises(MCPError) as caught:
        anyio.run(ANSWERED[case], passthrough)
    assert caught.value.error.code == types.INVALID_PARAMS
    # recorded through the seam (this stub gate redacts nothing: the real one, tests/attacks)
    (record,) = gate.records
    assert record["tool"].startswith("mcp__up__")


@pytest.mark.parametrize("case", list(ANSWERED))
def test_an_upstream_error_without_a_secret_is_relayed_unchanged(case: str) -> None:
    passthrough, upstream, gate = _passthrough(_Inspector())
    upstream.session = _FailingSession("no such book")
    with pytest.raises(MCPError) as caught:
        anyio.run(ANSWERED[case], passthrough)
    assert caught.value.error == types.ErrorData(
        code=types.INVALID_PARAMS, message="no such book", data={"why": "no such book"}
    )
    assert gate.records == []


# -- end to end: a real session, proxy and upstream -----------------------------------------


def _key(harness: Harness) -> str:
    env = (harness.root / ".env").read_text(encoding="utf-8")
    return next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("API_KEY="))


def _proxy(harness: Harness, received: Path) -> Any:
    argv = launched([sys.executable, str(ECHO)])
    upstream = {"command": argv[0], "args": argv[1:], "env": {"RECEIVED": str(received)}}
    return harness.start_proxy({"mcpServers": {"up": upstream}}, workspace_tools=False)


async def _session_run(proxy: Any, steps: list[Any]) -> list[Any]:
    out: list[Any] = []
    async with (
        httpx2.AsyncClient(headers=proxy.headers, timeout=60) as http,
        streamable_http_client(proxy.url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        for step in steps:
            try:
                out.append(await step(session))
            except MCPError as exc:
                out.append(("error", exc.error.message))
    return out


def _call(meta: dict[str, Any]) -> Any:
    return lambda session: session.call_tool("lookup", {"book": "dune"}, meta=meta)


def _completion(value: str, context: dict[str, str] | None = None) -> Any:
    ref = types.PromptReference(type="ref/prompt", name="review")
    return lambda session: session.complete(ref, {"name": "book", "value": value}, context)


@pytest.mark.slow
def test_a_key_in_meta_or_a_completion_never_reaches_the_upstream(tmp_path: Path) -> None:
    received = tmp_path / "received.jsonl"
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        key = _key(harness)
        big = "x" * 20_000
        steps = [
            _call({"trace": "t1", "note": key}),
            _call({"nested": [[{"deep": [f"see {key}"]}]]}),
            _call({f"ключ-{key}": "unicode key"}),
            _call({"blob": big + key + big}),
            _completion(key),
            _completion("du", {"tone": key}),
        ]
        results = anyio.run(_session_run, _proxy(harness, received), steps)
        seen = received.read_text(encoding="utf-8") if received.exists() else ""
        assert key not in seen
        # each refused (the immune system quarantines the session after enough of them)
        assert "known secret" in results[0].content[0].text
        for result in results[:4]:
            assert result.is_error and "[blocked]" in result.content[0].text
        for result in results[4:]:
            assert result[0] == "error" and "[blocked]" in result[1]
        assert harness.verdict == "FAIL"
        tools = [call.tool for call in harness.calls()]
        assert tools.count("mcp__up__completion/complete") == 2
        assert key not in json.dumps([call.params for call in harness.calls()])
    finally:
        harness.close()


@pytest.mark.slow
def test_progress_tokens_trace_ids_and_completions_pass(tmp_path: Path) -> None:
    received = tmp_path / "received.jsonl"
    harness = Harness.create(tmp_path / "s", template="python-service", policy="safety")
    try:
        steps = [
            _call({"progressToken": "p-1"}),
            _call({"trace": "t1", "tenant": "acme"}),
            _completion("du", {"tone": "kind"}),
        ]
        results = anyio.run(_session_run, _proxy(harness, received), steps)
        assert not results[0].is_error and not results[1].is_error
        assert results[2].completion.values == ["dune"]
        lines = [json.loads(line) for line in received.read_text(encoding="utf-8").splitlines()]
        assert {"trace": "t1", "tenant": "acme"}.items() <= (lines[1]["meta"] or {}).items()
        assert lines[2]["completion"] == "du"
        assert harness.verdict == "PASS"
        calls = harness.calls()
        assert [call.tool for call in calls] == ["mcp__up__lookup", "mcp__up__lookup"]
        assert calls[1].params["_meta"] == {"trace": "t1", "tenant": "acme"}
    finally:
        harness.close()
